'''JAX302 traced-while: a `while` loop whose condition is traced.

## What it does
Finds `while` loops whose condition is a traced value inside a function that runs under a
trace (jitted, vmapped, a `lax` body, or called from such code with traced arguments).
Conditions on shapes, `len()`, static arguments and Python counters compared with static
bounds are static and never flagged.

## Why is this bad?
Python decides each trip of a `while` loop from the truth of its condition. A traced value has
none: the first trace raises `TracerBoolConversionError` (or `ConcretizationTypeError`). The
loop only ever worked eagerly.

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
(which jit rejects) is not traced. `lax.while_loop` is not reverse-differentiable; in a function the module
differentiates, a static bound (`static_argnames`) is the fix that keeps gradients working.

## Preview
Shown only with `--preview`: a condition traced only as what a call of a project helper or an
object's method returns, given a traced argument (`while not done(state, x):`).

## Example
```python
@jax.jit
def newton_sqrt(a):
    x = a
    while jnp.abs(x * x - a) > 1e-6:
        x = 0.5 * (x + a / x)
    return x
```

## Use instead
```python
@jax.jit
def newton_sqrt(a):
    x = a

    def loop_cond(x):
        return jnp.abs(x * x - a) > 1e-6

    def loop_body(x):
        x = 0.5 * (x + a / x)
        return x

    x = jax.lax.while_loop(loop_cond, loop_body, x)
    return x
```

The fix is decided per loop:
- **`static_argnames`** when the condition depends only on parameters that every call site in
  the module passes as hashable literals, and the function is jitted here with `jax.jit`.
- **`lax.while_loop`** carrying every variable that the body assigns and that exists before
  the loop (`jaxfix.rewriting.loops`).
- **manual** for `break`/`continue`/`return` in the body, side effects (a call statement,
  attribute or item assignment), `raise`, an `else:` clause, a variable first assigned in the
  loop and used after it, and a static operand of `and`/`or` that may guard the traced one.

## Fix safety
The reference behaviour is the original run eagerly (`jax.disable_jit()`). The rewrite is
unsafe (the message says why) when a carried variable starts as a Python number literal and
the body changes it with traced values (a zero-trip loop then returns it with the body's
dtype), when the function is differentiated in the module (reverse mode fails on
`while_loop`), or when a parameter becomes static though it is not annotated
`int`/`bool`/`str`.

## References
- https://docs.jax.dev/en/latest/control-flow.html
- https://docs.jax.dev/en/latest/_autosummary/jax.lax.while_loop.html
- https://docs.jax.dev/en/latest/errors.html#jax.errors.TracerBoolConversionError
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


class TracedWhileRule(SiteRule, Rule):
    __doc__ = __doc__

    name = "traced-while"
    codes = (Code("JAX302", "traced-while", "`while` loop on a traced condition", "sometimes"),)
    valid = (
        Valid(
            """
            import jax


            @jax.jit
            def collapse(x):
                while x.ndim > 1:
                    x = x.sum(axis=0)
                return x
            """
        ),
        Valid(
            """
            import jax


            @jax.jit
            def halve(x):
                return jax.lax.while_loop(lambda v: v.sum() > 1.0, lambda v: v / 2, x)
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax


            @jax.jit
            def halve(x):
                while x.sum() > 1.0:
                    x = x / 2
                return x
            """,
            """
            import jax


            @jax.jit
            def halve(x):
                def loop_cond(x):
                    return x.sum() > 1.0

                def loop_body(x):
                    x = x / 2
                    return x

                x = jax.lax.while_loop(loop_cond, loop_body, x)
                return x
            """,
        ),
        Invalid(
            """
            import jax


            @jax.jit
            def halvings(x, n: int):
                while n > 0:
                    x, n = x / 2, n - 1
                return x


            y = halvings(8.0, 3)
            """,
            """
            import functools

            import jax


            @functools.partial(jax.jit, static_argnames=("n",))
            def halvings(x, n: int):
                while n > 0:
                    x, n = x / 2, n - 1
                return x


            y = halvings(8.0, 3)
            """,
        ),
        Invalid(
            """
            import jax


            @jax.jit
            def halve_loudly(x):
                while x.sum() > 1.0:
                    print(x)
                    x = x / 2
                return x
            """,
            None,
        ),
    )

    screened = (ast.While,)

    @staticmethod
    def may_flag(fn: ScreenFunction, n: ast.AST) -> bool:
        return type(n) is ast.While and fn.test_traced(n.test)

    @staticmethod
    def message(fn: FunctionRewrite, site: Site) -> str:
        return f"`while` condition `{fn.code(site.node.test)}` is traced"

    @staticmethod
    def decide(sites: FunctionSites, site: Site) -> Fix:
        """`static_argnames`, else `lax.while_loop`, else manual with the reason."""
        loop = site.node
        return static_argnames_fix(sites.rewrite, [loop.test], loop) or sites.loops.while_loop(loop)


# `<Name>Command` for the rule: a libcst codemod command, made on first access
__getattr__ = commands_for(TracedWhileRule)
