'''JAX305 traced-bool-op: `assert`, `and`, `or` or `not` on a traced value.

## What it does
Finds `assert` statements and `and`/`or`/`not` operators whose operand must be converted to a
Python bool although it is traced, inside a function that runs under a trace (jitted,
vmapped, a `lax` body, or called from such code with traced arguments). An `and`/`or`/`not`
inside a condition that JAX301 or JAX302 already report is part of that finding, not a second
one. `x.ndim == 1 and x.shape[0] > 2` is static and never flagged.

## Why is this bad?
`a and b` asks for the truth of `a`, `not a` for the truth of `a`, and `assert c` for the truth
of `c`. A traced value has none: the first trace raises `TracerBoolConversionError`. The code
only ever worked eagerly.

## Known problems
Reported only where this module proves the value traced: a parameter of a function it
transforms (and what such a function passes on through calls this module shows), a data
attribute of an object whose class it shows (the method's receiver, a parameter annotated with
the class), or what an array operation makes. A value only a caller in another module, a
framework convention or a guessed class makes traced is not reported: on public code nobody
had tuned on, such findings were all wrong. The transformed def is the one last
bound above the transform (a later plain-Python redefinition of the name is not), a parameter with a default
that no call in the module passes (a `**kwargs` at a call may not pass it; a caller in another
module is not seen) is that Python default, and in a notebook a parameter every call gives a str
(which jit rejects) is not traced. Only the left operand of `and`/`or` decides (the right one is returned as is).
`x or {}` (an empty dict, list or tuple default) says `x` is a container or None: its truth is
its emptiness, a Python bool, and it is not reported.

## Preview
Shown only with `--preview`, whatever the evidence: on public code nobody had prepared, 1 of 23
first-contact findings was real (fifteen blind pools, wrong on seven: asserts under `if
jax.config.jax_disable_jit:`, checks that only run eagerly); published code rarely keeps a check
that fails on every trace. Within preview, like the family's other rules: an operand traced only as
what a call of a project helper or an object's method returns, given a traced argument
(`not self.inner.contains(p)`).

## Example
```python
@jax.jit
def inside(x):
    return (x > 0) and (x < 1)
```

## Use instead
```python
@jax.jit
def inside(x):
    return jnp.logical_and(x > 0, x < 1)
```

`and`/`or`/`not` become `jnp.logical_and`/`logical_or`/`logical_not`. An `assert` on a traced
value is manual: check it with `equinox.error_if` or `jax.experimental.checkify.check`, or
remove it.

## Fix safety
The rewrite is safe when every operand is already boolean (a comparison, `not`, `isnan`, ...):
`logical_and` then returns what `and` did. It is unsafe otherwise: `a and b` returns one of its
operands, `jnp.logical_and(a, b)` a boolean array, so a later use of the value as a number
changes.

## References
- https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError
- https://docs.jax.dev/en/latest/_autosummary/jax.numpy.logical_and.html
- https://docs.jax.dev/en/latest/debugging/checkify_guide.html
'''

from __future__ import annotations

import ast

import libcst as cst

from codemods._command import commands_for
from codemods.traced_control_flow.sites import FunctionSites, Site, SiteRule
from jaxfix.analysis.screen_function import ScreenFunction
from jaxfix.model import Fix, ImportRequest, Safety
from jaxfix.rewriting.functions import FunctionRewrite
from jaxfix.rulebase import Code, Invalid, Rule, Valid

# calls whose result is a boolean array: `logical_and` of them returns what `and` did
_BOOLEAN_CALLS = ("isnan", "isinf", "isfinite", "logical_and", "logical_or", "logical_not", "any", "all")


class TracedBoolOpRule(SiteRule, Rule):
    __doc__ = __doc__

    name = "traced-bool-op"
    codes = (Code("JAX305", "traced-bool-op", "`assert`/`and`/`or`/`not` on a traced value", "sometimes"),)
    valid = (
        Valid(
            """
            import jax


            @jax.jit
            def head(x):
                if x.ndim == 1 and x.shape[0] > 2:
                    return x[:2]
                return x
            """
        ),
        Valid(
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def inside(x):
                return jnp.logical_and(x > 0, x < 1)
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def inside(x):
                return (x > 0) and (x < 1)
            """,
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def inside(x):
                return jnp.logical_and(x > 0, x < 1)
            """,
        ),
        Invalid(
            """
            import jax


            @jax.jit
            def checked_log(x):
                assert x > 0
                return x
            """,
            None,
        ),
    )

    screened = (ast.Assert, ast.BoolOp, ast.UnaryOp)

    @staticmethod
    def may_flag(fn: ScreenFunction, n: ast.AST) -> bool:
        kind = type(n)
        if kind is ast.Assert:
            return fn.test_traced(n.test)
        if kind is ast.BoolOp:
            return any(fn.test_traced(v) for v in n.values[:-1])
        return kind is ast.UnaryOp and isinstance(n.op, ast.Not) and fn.test_traced(n.operand)

    @staticmethod
    def message(fn: FunctionRewrite, site: Site) -> str:
        n = site.node
        if site.kind == "assert":
            return f"`assert` on traced `{fn.code(n.test)}`"
        if site.kind == "boolop":
            op = "and" if isinstance(n.operator, cst.And) else "or"
            return f"`{op}` on traced `{fn.code(n.left)}`"
        return f"`not` on traced `{fn.code(n.expression)}`"

    @staticmethod
    def decide(sites: FunctionSites, site: Site) -> Fix:
        """`jnp.logical_*` for operators; manual for `assert`."""
        fn = sites.rewrite
        if site.kind == "assert":
            return fn.ctx.manual(
                "an assert cannot check a traced value: use `equinox.error_if` or "
                "`jax.experimental.checkify.check`, or remove it"
            )
        imports: list[ImportRequest] = []
        new = fn.predicate(site.node, imports)
        boolean = _is_boolean(fn, site.node)
        safety = Safety.SAFE if boolean else Safety.UNSAFE
        title = "use `jnp.logical_*`" + ("" if boolean else " (unsafe: returns a boolean array, not an operand)")
        return fn.ctx.rewrite(title, safety, replace={site.node: new}, imports=imports)


def _is_boolean(fn: FunctionRewrite, e: cst.BaseExpression) -> bool:
    """`e` is a boolean already (so `logical_and` of it returns what `and` returned)."""
    if isinstance(e, cst.Comparison):
        return True
    if isinstance(e, cst.BooleanOperation):
        return _is_boolean(fn, e.left) and _is_boolean(fn, e.right)
    if isinstance(e, cst.UnaryOperation) and isinstance(e.operator, cst.Not):
        return True
    if isinstance(e, cst.Call):
        q = fn.names.qualify(e.func) or ""
        return q.split(".")[-1] in _BOOLEAN_CALLS
    if isinstance(e, cst.Name) and e.value in ("True", "False"):
        return True
    return False


# `<Name>Command` for the rule: a libcst codemod command, made on first access
__getattr__ = commands_for(TracedBoolOpRule)
