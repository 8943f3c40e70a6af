'''JAX307 traced-shape: an array shape or slice bound computed from a traced value.

## What it does
Finds `jax.numpy` calls whose shape or size argument is traced (`jnp.zeros(n)`, `jnp.arange(n)`,
`jnp.ones((n, 3))`, `jnp.reshape(x, (n, -1))`, `jnp.linspace(a, b, num)`, ...), the same for
`jax.nn.one_hot(x, num_classes)`, `jax.random.split(key, num)` and the `shape` of
`jax.random` samplers (`jax.random.normal(key, (n,))`), and
slices whose bounds are traced (`x[:n]`, `x[i:j]`), inside a function that runs under a trace
(jitted, vmapped, a `lax` body, or called from such code with traced arguments). Shapes built
from `.shape`, `len()`, static arguments and constants are static and never flagged.

## Why is this bad?
Under `jit` every array has a shape fixed at trace time. A shape that depends on a traced value
would depend on data: the first trace raises `ConcretizationTypeError` for a shape, and
`IndexError` ("Array slice indices must have static start/stop/step") for a slice bound. The
code only ever worked eagerly.

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
(which jit rejects) is not traced. A property read on the receiver is decided by the
getters that can run: an abstract stub (`...`, `raise NotImplementedError`) is left to its
overrides (`jaxfix.analysis.stubs`).

## Preview
Shown only with `--preview`: a shape or bound traced only as what a call of a project helper or an
object's method returns, given a traced argument (`x[:, :width_of(cfg, x)]`).

## Example
```python
@jax.jit
def prefix_sum(x, n):
    return x[:n].sum()
```

## Use instead
```python
@partial(jax.jit, static_argnames=("n",))
def prefix_sum(x, n):
    return x[:n].sum()
```
or keep the shape fixed and mask: `jnp.where(jnp.arange(x.shape[0]) < n, x, 0).sum()`.

The fix is **`static_argnames`** when the size depends only on parameters that every call site
in the module passes as hashable literals and the function is jitted here with `jax.jit`;
otherwise it is manual (`lax.dynamic_slice` with a static size, or a fixed maximum size with
masking).

## Fix safety
Making a parameter static is safe when it is annotated `int`/`bool`/`str`; otherwise it is
unsafe: a caller outside the module passing an array would now fail, and each distinct value
compiles once.

## References
- https://docs.jax.dev/en/latest/errors.html#jax.errors.ConcretizationTypeError
- https://docs.jax.dev/en/latest/jit-compilation.html#marking-arguments-as-static
- https://docs.jax.dev/en/latest/_autosummary/jax.lax.dynamic_slice.html
'''

from __future__ import annotations

import ast

from codemods._command import commands_for
from codemods.traced_control_flow.sites import (
    FunctionSites,
    Site,
    SiteRule,
    shape_arguments,
)
from codemods.traced_control_flow.static_args import static_argnames_fix
from jaxfix.analysis.screen_function import ScreenFunction
from jaxfix.model import Fix
from jaxfix.rewriting.functions import FunctionRewrite
from jaxfix.rulebase import Code, Invalid, Rule, Valid


class TracedShapeRule(SiteRule, Rule):
    __doc__ = __doc__

    name = "traced-shape"
    codes = (Code("JAX307", "traced-shape", "array shape or slice bound computed from a traced value", "sometimes"),)
    valid = (
        Valid(
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def front(x):
                mask = jnp.zeros(x.shape[0])
                return x[: x.shape[0] // 2] + mask[:1]
            """
        ),
        Valid(
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def prefix_sum(x, n):
                return jnp.where(jnp.arange(x.shape[0]) < n, x, 0).sum()
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def padded(x, n: int):
                return jnp.zeros(n) + x.sum()


            y = padded(jnp.ones(3), 4)
            """,
            """
            import functools

            import jax
            import jax.numpy as jnp


            @functools.partial(jax.jit, static_argnames=("n",))
            def padded(x, n: int):
                return jnp.zeros(n) + x.sum()


            y = padded(jnp.ones(3), 4)
            """,
        ),
        Invalid(
            """
            import jax
            import jax.numpy as jnp


            @jax.jit
            def up_to_peak(x):
                return x[: jnp.argmax(x)]
            """,
            None,
        ),
    )

    screened = (ast.Call, ast.Subscript)

    @staticmethod
    def may_flag(fn: ScreenFunction, n: ast.AST) -> bool:
        if type(n) is ast.Call:
            positions, keywords = shape_arguments(fn.screen.names.qualify_ast(n.func))
            pos = [a for a in n.args if not isinstance(a, ast.Starred)]
            shape_args = [pos[i] for i in positions if i < len(pos)]
            shape_args += [k.value for k in n.keywords if k.arg in keywords]
            return any(fn.traced(a) for a in shape_args)
        if type(n) is ast.Subscript:
            parts = n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]
            return any(
                fn.traced(p.lower) or fn.traced(p.upper) or fn.traced(p.step) for p in parts if isinstance(p, ast.Slice)
            )
        return False

    @staticmethod
    def message(fn: FunctionRewrite, site: Site) -> str:
        first = fn.code(site.traced[0])
        if site.kind == "shape":
            return f"`{fn.names.qualify(site.node.func).rsplit('.', 1)[-1]}` gets traced size `{first}`"
        return f"slice bound `{first}` is traced"

    @staticmethod
    def decide(sites: FunctionSites, site: Site) -> Fix:
        """`static_argnames`, else manual (the output shape would depend on data)."""
        fn = sites.rewrite
        if site.kind == "shape":
            why = (
                "the output shape would depend on a traced value: make it a static argument, "
                "or use a fixed maximum size with masking"
            )
        else:
            why = "slice bounds must be static: use `lax.dynamic_slice` with a static size, or make the bound a static argument"
        return static_argnames_fix(fn, list(site.traced), site.node) or fn.ctx.manual(why)


# `<Name>Command` for the rule: a libcst codemod command, made on first access
__getattr__ = commands_for(TracedShapeRule)
