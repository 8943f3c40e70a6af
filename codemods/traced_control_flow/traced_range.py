'''JAX303 traced-range: a `for` loop over `range()` of a traced value.

## What it does
Finds `for i in range(...)` loops whose bounds are traced values inside a function that runs
under a trace (jitted, vmapped, a `lax` body, or called from such code with traced arguments).
`range(x.shape[0])`, `range(len(xs))` and ranges of static arguments or constants are static
and never flagged (long static loops are JAX502's).

## Why is this bad?
`range()` needs a Python integer. A traced bound has none: the first trace raises
`TracerIntegerConversionError` (or `ConcretizationTypeError`). The loop only ever worked
eagerly.

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
(which jit rejects) is not traced. `lax.fori_loop` with traced bounds is not reverse-differentiable; in a function
the module differentiates, a static bound (`static_argnames`) is the fix that keeps gradients
working.

## Preview
Shown only with `--preview`: a bound traced only as what a call of a project helper or an
object's method returns, given a traced argument (`range(steps_for(x))`).

## Example
```python
@jax.jit
def geometric_sum(r, x):
    n = jnp.argmax(x)
    total = jnp.zeros(())
    for k in range(n):
        total = total + r**k
    return total
```

## Use instead
```python
@jax.jit
def geometric_sum(r, x):
    n = jnp.argmax(x)
    total = jnp.zeros(())

    def loop_body(k, total):
        total = total + r**k
        return total

    total = jax.lax.fori_loop(0, n, loop_body, total)
    return total
```

The fix is decided per loop:
- **`static_argnames`** when the bounds depend only on parameters that every call site in the
  module passes as hashable literals, and the function is jitted here with `jax.jit`.
- **`lax.fori_loop`** over `range(hi)` or `range(lo, hi)` carrying every variable that the
  body assigns and that exists before the loop (`jaxfix.rewriting.loops`).
- **manual** for a `range` with a step or unusual arguments, a loop target that is not one
  name, the loop variable used after the loop, `break`/`continue`/`return`, side effects,
  `raise`, an `else:` clause, and a variable first assigned in the loop and used after it.

## Fix safety
The reference behaviour is the original run eagerly (`jax.disable_jit()`). The rewrite is
unsafe (the message says why) when a carried variable starts as a Python number literal and
the body changes it with traced values (a zero-trip loop then returns it with the body's
dtype), when the function is differentiated in the module (reverse mode fails on a
`fori_loop` with traced bounds), when the body indexes a value with the loop counter (`params[i]`:
a Python list of layer parameters cannot take the traced counter of a `fori_loop`), or when a
parameter becomes static though it is not annotated `int`/`bool`/`str`.

## References
- https://docs.jax.dev/en/latest/control-flow.html
- https://docs.jax.dev/en/latest/_autosummary/jax.lax.fori_loop.html
- https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerIntegerConversionError
'''

from __future__ import annotations

import ast

from codemods._command import commands_for
from codemods.traced_control_flow.sites import FunctionSites, Site, SiteRule
from codemods.traced_control_flow.static_args import static_argnames_fix
from jaxfix.analysis.screen_function import ScreenFunction
from jaxfix.model import Fix
from jaxfix.rewriting.functions import FunctionRewrite
from jaxfix.rulebase import Code, Invalid, Rule, Valid


class TracedRangeRule(SiteRule, Rule):
    __doc__ = __doc__

    name = "traced-range"
    codes = (Code("JAX303", "traced-range", "`for` over `range()` of a traced value", "sometimes"),)
    valid = (
        Valid(
            """
            import jax


            @jax.jit
            def cumulative(x):
                total = x[0]
                for i in range(x.shape[0]):
                    total = total + x[i]
                return total
            """
        ),
        Valid(
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def grow(x):
                n = jnp.sum(x > 0)
                return jax.lax.fori_loop(0, n, lambda i, v: v * 2, x)
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def grow(x):
                n = jnp.sum(x > 0)
                for i in range(n):
                    x = x * 2
                return x
            """,
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def grow(x):
                n = jnp.sum(x > 0)

                def loop_body(i, x):
                    x = x * 2
                    return x

                x = jax.lax.fori_loop(0, n, loop_body, x)
                return x
            """,
        ),
        Invalid(
            """
            import jax


            @jax.jit
            def add_times(x, times: int):
                for _ in range(times):
                    x = x + 1
                return x


            y = add_times(1.0, 3)
            """,
            """
            import functools

            import jax


            @functools.partial(jax.jit, static_argnames=("times",))
            def add_times(x, times: int):
                for _ in range(times):
                    x = x + 1
                return x


            y = add_times(1.0, 3)
            """,
        ),
    )

    screened = (ast.For,)

    @staticmethod
    def may_flag(fn: ScreenFunction, n: ast.AST) -> bool:
        return (
            type(n) is ast.For
            and isinstance(n.iter, ast.Call)
            and fn.screen.names.qualify_ast(n.iter.func) == "range"
            and fn.traced(n.iter)
        )

    @staticmethod
    def message(fn: FunctionRewrite, site: Site) -> str:
        bounds = ", ".join(fn.code(a.value) for a in site.node.iter.args)
        return f"`range({bounds})` has a traced bound"

    @staticmethod
    def decide(sites: FunctionSites, site: Site) -> Fix:
        """`static_argnames`, else `lax.fori_loop`, else manual with the reason."""
        loop = site.node
        bounds = [a.value for a in loop.iter.args]
        return static_argnames_fix(sites.rewrite, bounds, loop) or sites.loops.fori_loop(loop)


# `<Name>Command` for the rule: a libcst codemod command, made on first access
__getattr__ = commands_for(TracedRangeRule)
