"""JAX301 traced-if: an `if`, `elif` or conditional expression whose condition is traced.

## What it does
Finds `if`/`elif` statements and `a if c else b` expressions whose condition is a traced value,
and builtin `max(a, b)`/`min(a, b)` (which compare their arguments with `>`/`<`) on traced
values, inside a function that runs under a trace: decorated with `@jax.jit` (or `partial(jax.jit,
...)`, `eqx.filter_jit`, `jax.vmap`), wrapped by `jax.jit(f)` anywhere in the module, passed
as a body to `lax.scan`/`fori_loop`/`while_loop`/`cond`/`switch`, or called from such code with
traced arguments. Conditions on `.shape`, `.ndim`, `.dtype`, `.size`, `len()`, `isinstance()`,
`is None`, static arguments, literals and module constants are static and never flagged, and so
are shape and dtype queries (`jnp.shape`, `lax.broadcast_shapes`, `jnp.issubdtype`,
`jnp.iscomplexobj`, `jnp.finfo(...)`, tuple arithmetic on shapes), a `tree_map` of such a test
over the leaves, and helpers of the module whose body only reads shapes or dtypes.

## Why is this bad?
A traced value has no Python truth value: the first trace raises
`TracerBoolConversionError` (or `ConcretizationTypeError`). The code only ever worked eagerly.

## Known problems
Reported only where this module proves the value traced: a parameter of a function it
transforms (and what such a function passes on through calls this module shows), a data
attribute of an object whose class it shows (the method's receiver, a parameter annotated with
the class or given an instance of it by every call the module shows, through `nnx.value_and_grad(loss_fn)(model)`
too), or what an array operation makes. A value only a caller in another module, a
framework convention or a guessed class makes traced is not reported: on public code nobody
had tuned on, such findings were all wrong. The transformed def is the one last
bound above the transform (a later plain-Python redefinition of the name is not), a parameter with a default
that no call in the module passes (a `**kwargs` at a call may not pass it; a caller in another
module is not seen) is that Python default, and in a notebook a parameter every call gives a str
(which jit rejects) is not traced. A function imported from the project (not from jax, NumPy or another array library)
has its body elsewhere: whether its result is traced is undecidable here, so a condition on
it is not reported. A `jnp.where` rewrite broadcasts: if the two original branches returned different
shapes, the rewrite returns the broadcast shape (the original could never run under jit).
`self` is traced only in classes the module registers as pytrees. Under `eqx.filter_jit` (and
`filter_vmap`), which trace array leaves only, a parameter is undecidable and not reported unless
it is annotated as an array or a pytree class of the module, used as only an array is (`x.shape`),
or given an array by a call in the module; so is a `**kwargs` value. A branch that every traced
call of a helper rules out with a literal flag (`if not for_jit:` where each jitted caller passes
`for_jit=True`) is not traced. A parameter no call in the module passes holds its default, which jit never traces:
a literal, or for a `def` outside functions a dotted name (`Kind.A`) (`jaxfix.analysis.defaults`);
a caller outside the project that passes it is not seen.

## Preview
Shown only with `--preview`: a condition traced only as what a call of a project helper or an
object's method returns, given a traced argument (`if can_use_kernel(x, w):`).

## Example
```python
@jax.jit
def f(x):
    if x > 0:
        return x
    else:
        return 2 * x
```

## Use instead
```python
@jax.jit
def f(x):
    return jnp.where(x > 0, x, 2 * x)
```

The fix is decided per site:
- **split** when the condition joins static and traced operands with `and`/`or`
  (`mode == "train" and x > 0`): the finding points at the traced operand, the static operands
  stay a Python `if` and the traced ones get their own `if` nested inside it, which the next
  round turns into `jnp.where`/`lax.cond`. `if S and T: A` becomes `if S: if T: A` (an `else`
  of one line is copied into both levels); `if S or T: A` becomes `if S: A else: if T: A` (A of
  one line), and `if S or T: return A` becomes `if S: return A` then `if T: return A`.
- **`static_argnames`** when the condition depends only on parameters that every call site in
  the module passes as hashable literals, and the function is jitted here with `jax.jit`.
  Otherwise a parameter compared with a string literal (`mode == "add"`) gets the manual advice
  to make it static: a string cannot be a traced argument, so no `jnp.where` would help.
- **`jnp.where`** when each branch is a single `return`, or a single assignment of one
  variable, of a cheap pure expression; `elif` chains nest. A side with `sqrt`, `log`, a
  division or a power gets the double-where form, which keeps gradients free of NaN.
- **`lax.cond`** for everything else a function can express: several assigned variables,
  expensive or nested branches, early returns (the code after `if c: return A` moves into the
  false branch). Conditions nested in the branches are rewritten in the next round.
- **`jnp.maximum`/`jnp.minimum`** for builtin `max`/`min` of two or more arguments (nested
  pairwise); `max(xs)` of one iterable is manual (`jnp.max` reduces every axis unless told).
- **manual** for side effects, `raise`, `break`/`continue` in a branch, a variable first
  assigned in only some branches, an early return inside a loop or nested block, a static
  operand of `and`/`or` that the split cannot separate (an `and` guarding an early `return`,
  longer branches it would copy), and an `elif` on a traced value after a static test.

## Fix safety
The reference behaviour is the original run eagerly (`jax.disable_jit()`). The fix is safe when
it computes the same values, dtypes and gradients for every input the original accepted
eagerly. It is unsafe (the message says why) when one branch produces a Python number literal
and another an array (`jnp.where` promotes the literal, `lax.cond` requires equal types), or
when a parameter becomes static though it is not annotated `int`/`bool`/`str` (a caller outside
the module passing an array would now fail, and each distinct value compiles once), or when the
condition reads a parameter with a Python number or bool default (`def fill(..., i=0): if i < n:`,
a recursion counter: a call that leaves the default branches in Python today, and `lax.cond` traces
both branches). Manual when a branch calls the function itself again (a recursion the Python test
ends would never end under `lax.cond`). The
`jnp.maximum`/`jnp.minimum` fix is always unsafe: NaN propagates through it, while Python's
`max` keeps the earlier argument when a comparison with NaN is false.

## References
- https://docs.jax.dev/en/latest/control-flow.html
- https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError
- https://docs.jax.dev/en/latest/_autosummary/jax.numpy.where.html
- https://docs.jax.dev/en/latest/_autosummary/jax.lax.cond.html
"""

from __future__ import annotations

import ast

import libcst as cst

from codemods._command import commands_for
from codemods.traced_control_flow.branch_rewrite import BranchRewrite, minmax_fix
from codemods.traced_control_flow.sites import (
    MINMAX,
    FunctionSites,
    Site,
    SiteRule,
    if_chain,
)
from codemods.traced_control_flow.split_condition import split_fix
from codemods.traced_control_flow.static_args import static_argnames_fix
from jaxfix.analysis.python_values import is_str_literal
from jaxfix.analysis.screen_function import ScreenFunction
from jaxfix.analysis.walk import walk
from jaxfix.model import Fix
from jaxfix.rewriting.functions import FunctionRewrite
from jaxfix.rulebase import Code, Invalid, Rule, Valid


class TracedIfRule(SiteRule, Rule):
    __doc__ = __doc__

    name = "traced-if"
    codes = (Code("JAX301", "traced-if", "`if`/`elif`/conditional expression on a traced value", "sometimes"),)
    valid = (
        Valid(
            """
            import jax


            @jax.jit
            def flatten(x):
                if x.ndim > 1:
                    return x.reshape(-1)
                return x
            """
        ),
        Valid(
            """
            from functools import partial

            import jax
            import jax.numpy as jnp


            @partial(jax.jit, static_argnames=("mode",))
            def pick(x, mode):
                if mode == "abs":
                    return jnp.abs(x)
                return x
            """
        ),
        Valid(
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def leaky(x):
                return jnp.where(x > 0, x, 0.1 * x)
            """
        ),
        Valid(
            """
            import jax
            import jax.numpy as jnp


            def is_floating(a):
                return jnp.issubdtype(a.dtype, jnp.floating)


            @jax.jit
            def normalise(a):
                if not is_floating(a):
                    a = a.astype(jnp.float32)
                return a / jnp.linalg.norm(a)
            """
        ),
        Valid(
            """
            import equinox as eqx
            import jax


            class Window(eqx.Module):
                size: int = eqx.field(static=True)
                scale: jax.Array

                def __check_init__(self):
                    if self.size < 1:
                        raise ValueError("empty window")


            @jax.jit
            def build(scale):
                return Window(4, scale).scale
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def leaky(x):
                if x > 0:
                    return x
                else:
                    return 0.1 * x
            """,
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def leaky(x):
                return jnp.where(x > 0, x, 0.1 * x)
            """,
        ),
        Invalid(
            """
            import jax


            @jax.jit
            def bounce(x, v):
                if x.sum() > 0:
                    x = x - v
                    v = -v
                else:
                    x = x + v
                return x, v
            """,
            """
            import jax


            @jax.jit
            def bounce(x, v):
                def true_branch(x, v):
                    x = x - v
                    v = -v
                    return x, v

                def false_branch(x, v):
                    x = x + v
                    return x, v

                x, v = jax.lax.cond(x.sum() > 0, true_branch, false_branch, x, v)
                return x, v
            """,
        ),
        Invalid(
            """
            import jax


            @jax.jit
            def scale(x, double: bool):
                if double:
                    return 2 * x
                return x


            y = scale(1.0, True)
            """,
            """
            import functools

            import jax


            @functools.partial(jax.jit, static_argnames=("double",))
            def scale(x, double: bool):
                if double:
                    return 2 * x
                return x


            y = scale(1.0, True)
            """,
        ),
        Invalid(
            """
            from functools import partial

            import jax


            @partial(jax.jit, static_argnames=("mode",))
            def augment(x, mode):
                if mode == "train" and x.sum() > 0:
                    x = x * 2.0
                return x
            """,
            """
            from functools import partial

            import jax


            @partial(jax.jit, static_argnames=("mode",))
            def augment(x, mode):
                if mode == "train":
                    x = jax.numpy.where(x.sum() > 0, x * 2.0, x)
                return x
            """,
        ),
        Invalid(
            """
            import equinox as eqx
            import jax


            class Potential(eqx.Module):
                a: jax.Array

                def __check_init__(self):
                    if (self.a < 0) or (self.a > 1):
                        raise ValueError("a must be in [0, 1]")


            @jax.jit
            def energy(a, r):
                return Potential(a).a * r
            """,
            None,
        ),
    )

    screened = (ast.If, ast.IfExp, ast.Call)

    @staticmethod
    def may_flag(fn: ScreenFunction, n: ast.AST) -> bool:
        if type(n) is ast.Call:  # builtin `max`/`min` (`sites.minmax_site`)
            return (
                type(n.func) is ast.Name
                and n.func.id in MINMAX
                and fn.screen.names.qualify_ast(n.func) in MINMAX
                and any(fn.traced(a) for a in n.args)
            )
        return (type(n) is ast.If or type(n) is ast.IfExp) and fn.test_traced(n.test)

    @staticmethod
    def message(fn: FunctionRewrite, site: Site) -> str:
        if site.kind == "minmax":
            name = site.node.func.value
            return (
                f"builtin `{name}` compares traced `{fn.code(site.traced[0])}` with `{'>' if name == 'max' else '<'}`"
            )
        if site.kind == "ifexp":
            return f"conditional expression on traced `{fn.code(site.node.test)}`"
        if site.traced:  # a condition with static operands too: only these are the problem
            parts = ", ".join(f"`{fn.code(t)}`" for t in site.traced)
            return f"`{site.kind}` condition `{fn.code(site.node.test)}` has traced part {parts}"
        return f"`{site.kind}` condition `{fn.code(site.node.test)}` is traced"

    @staticmethod
    def decide(sites: FunctionSites, site: Site) -> Fix:
        """`static_argnames`, else `jnp.where`, else `lax.cond`, else manual with the reason."""
        fn = sites.rewrite
        if site.kind == "elif":
            return fn.ctx.manual("an `elif` on a traced value after a static test: nest it as `else: if ...:` first")
        if site.kind == "ifexp":
            return BranchRewrite(fn).fix_ifexp(site.node)
        if site.kind == "minmax":
            return minmax_fix(fn, site.node)
        chain = if_chain(site.node)
        static = static_argnames_fix(fn, [b.test for b in chain], site.node)
        if static is not None:
            return static
        compared = _compared_with_text(fn, [b.test for b in chain])
        if compared:
            return fn.ctx.manual(_TEXT_ARGUMENT.format(names=", ".join(f"`{p}`" for p in compared)))
        return split_fix(fn, site.node) or BranchRewrite(fn).fix_if(site.node, chain)


# A parameter compared with a string literal holds a `str`, which jit cannot trace: the call fails
# on the argument itself (probml/probml-notebooks@4c0da5e9: notebooks/jax_intro.ipynb, `jax.jit(f)(42,
# "add")`), and a `jnp.where` on the comparison would not help; only a static argument does.
_TEXT_ARGUMENT = (
    "{names} is compared with a string, and a string cannot be a traced argument (the jitted call "
    "fails on it): make it a static argument (`static_argnames`) where the function is jitted"
)


def _compared_with_text(fn: FunctionRewrite, tests: list[cst.BaseExpression]) -> list[str]:
    """The traced parameters that `tests` compare with a string literal (`mode == "add"`)."""
    comparisons = _Comparisons()
    for test in tests:
        walk(test, comparisons)
    found: list[str] = []
    for node in comparisons.found:
        operands = (node.left, *(c.comparator for c in node.comparisons))
        if any(is_str_literal(x) for x in operands):
            for x in operands:
                if isinstance(x, cst.Name) and x.value in fn.facts.entry_traced and x.value not in found:
                    found.append(x.value)
    return found


class _Comparisons(cst.CSTVisitor):
    """The comparisons under what it walks (one class: one made per call cost ABCMeta's class creation)."""

    def __init__(self) -> None:
        self.found: list[cst.Comparison] = []

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self.found.append(node)


# `<Name>Command` for the rule: a libcst codemod command, made on first access
__getattr__ = commands_for(TracedIfRule)
