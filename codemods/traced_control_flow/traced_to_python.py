'''JAX304 traced-to-python: `int()`, `float()`, `bool()`, `complex()`, `.item()` or `.tolist()` of a traced value.

## What it does
Finds conversions of traced values to Python scalars or lists inside a function that runs under
a trace (jitted, vmapped, a `lax` body, or called from such code with traced arguments).
Conversions of shapes (`int(x.shape[0])`), of `len()`, of static arguments and of constants are
static and never flagged. A `bool()` inside a condition that JAX301/JAX302/JAX305 already
report is not reported again.

## Why is this bad?
A traced value is an abstract array with no concrete number yet: `int(x)` raises
`ConcretizationTypeError` (or `TracerIntegerConversionError`), `x.item()` and `x.tolist()` raise
`ConcretizationTypeError` the first time the function is traced. The code only ever worked
eagerly.

## Known problems
A function is followed into the functions and methods it calls (`self.method`, a class's
`__init__`, a module-level instance's `__call__`), and, with the project index that `jaxfix check`
and the editor build, into other modules of the project: the finding then names the caller
(`traced here because `step` (jitted, train.py:12) calls `update` with `x` traced`).
Reported only where a module proves the value traced: a parameter of a function it transforms
(and what such a function passes on through calls it shows), a data attribute of an object whose
class it shows (the method's receiver, a parameter annotated with the class), or what an array
operation makes (in another module too). A value only a caller in another module, a framework
convention or a guessed class makes traced is not reported: on public code nobody had tuned on,
such findings were all wrong. The transformed def is the one last
bound above the transform (a later plain-Python redefinition of the name is not), a parameter with a default
that no call in the module passes (a `**kwargs` at a call may not pass it; a caller in another
module is not seen) is that Python default, and in a notebook a parameter every call gives a str
(which jit rejects) is not traced.

## Preview
Shown only with `--preview`: a value traced only as what a call of a project helper or an
object's method returns, given a traced argument (`int(count_of(x))`).

## Example
```python
@jax.jit
def scaled(x, k):
    return x * int(k)
```

## Use instead
```python
@jax.jit
def scaled(x, k):
    return x * k.astype(jnp.int32)
```
or make `k` a static argument (`@partial(jax.jit, static_argnames=("k",))`), or, for
debugging output, `jax.debug.print("{}", k)`.

## Fix safety
There is no automatic fix: whether the value should stay an array, become a static argument or
only be printed depends on what the code does with it. The finding says which options apply.

## References
- https://docs.jax.dev/en/latest/errors.html#jax.errors.ConcretizationTypeError
- https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerIntegerConversionError
- https://docs.jax.dev/en/latest/debugging/print_breakpoint.html
'''

from __future__ import annotations

import ast

from codemods._command import commands_for
from codemods.traced_control_flow.sites import (
    SCALAR_CONVERSIONS,
    FunctionSites,
    Site,
    SiteRule,
)
from jaxfix.analysis.screen_function import ScreenFunction
from jaxfix.model import Fix
from jaxfix.rewriting.functions import FunctionRewrite
from jaxfix.rulebase import Code, Invalid, Rule, Valid


class TracedToPythonRule(SiteRule, Rule):
    __doc__ = __doc__

    name = "traced-to-python"
    codes = (
        Code("JAX304", "traced-to-python", "`int()`/`float()`/`bool()`/`.item()`/`.tolist()` on a traced value", "never"),
    )
    valid = (
        Valid(
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def first_half(x):
                half = int(x.shape[0]) // 2
                return jnp.sum(x[:half])
            """
        ),
        Valid(
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def scaled(x, k):
                return x * k.astype(jnp.int32)
            """
        ),
        Valid(
            """
            import jax
            import jax.numpy as jnp


            def steps(n, dt):
                return int(n / dt)


            @jax.jit
            def grid(x):
                return jnp.zeros(steps(x.shape[0], 0.5)) + x.sum()
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax


            @jax.jit
            def scaled(x, k):
                return x * int(k)
            """,
            None,
        ),
        Invalid(
            """
            import jax


            @jax.jit
            def total(x):
                return x.sum().item()
            """,
            None,
        ),
        Invalid(
            """
            import jax
            import jax.numpy as jnp


            class Waveform:
                def __init__(self, dt):
                    self.dt = dt

                def length(self, T):
                    return int(jnp.ceil(T / self.dt))

                def __call__(self, T):
                    return jax.jit(self.samples)(T)

                def samples(self, T):
                    return jnp.zeros(16) * self.length(T)
            """,
            None,
        ),
    )

    screened = (ast.Call,)

    @staticmethod
    def may_flag(fn: ScreenFunction, n: ast.AST) -> bool:
        if type(n) is not ast.Call:
            return False
        q = fn.screen.names.qualify_ast(n.func) or ""
        if q in SCALAR_CONVERSIONS and any(fn.traced(a) for a in [*n.args, *(k.value for k in n.keywords)]):
            return True
        return isinstance(n.func, ast.Attribute) and n.func.attr in ("item", "tolist") and fn.traced(n.func.value)

    @staticmethod
    def message(fn: FunctionRewrite, site: Site) -> str:
        call, (value,) = site.node, site.traced
        what = f"`{fn.names.qualify(call.func)}()`" if site.kind == "convert" else f"`.{call.func.attr.value}()`"
        return f"{what} of traced `{fn.code(value)}` needs a concrete value"

    @staticmethod
    def decide(sites: FunctionSites, site: Site) -> Fix:
        """Always manual: the finding lists the ways out."""
        if site.kind == "convert":
            return sites.rewrite.ctx.manual(
                "keep it an array (`x.astype(...)`), make the argument static "
                "(`static_argnames`), or print it with `jax.debug.print`"
            )
        return sites.rewrite.ctx.manual("keep it an array, or print it with `jax.debug.print`")


# `<Name>Command` for the rule: a libcst codemod command, made on first access
__getattr__ = commands_for(TracedToPythonRule)
