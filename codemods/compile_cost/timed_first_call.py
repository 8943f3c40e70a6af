"""JAX505 `timed-first-call`: `%time`/`%%time` of a jitted function that was never called before
in the notebook: its one run includes tracing and compiling it."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from codemods._command import commands_for
from codemods.compile_cost.magics import (
    Magics,
    called_before,
    callee,
    in_loop,
    inline_jit,
    read_after,
)
from codemods.compile_cost.preview import flag
from jaxfix.analysis.project_lookups import project_jit_factory, project_jitted
from jaxfix.analysis.transforms import JIT_NAMES
from jaxfix.model import Finding
from jaxfix.rulebase import Code, Invalid, Rule, RuleContext, Valid


class TimedFirstCallRule(Rule):
    """
    ## What it does
    Finds `%time f(x)` and cells that start with `%%time` in notebooks whose timed code calls a
    function jitted in the notebook (`@jax.jit`, `f = jax.jit(...)`, `jax.jit(f)(x)`) that no
    earlier statement or timing magic of the notebook calls.

    jaxfix reads a notebook with its timing magics commented out, as jupytext writes them in a
    `.py` notebook; the rule reads that form in `.py` files too (`# %time f(x)`).

    ## Why is this bad?
    A jitted function is traced and compiled at its first call. `%time` runs the code once, so
    it reports the compile time (often seconds) as the function's run time. `%timeit` runs it
    many times, and JAX's documentation calls the function once before timing it.

    ## Known problems
    A call before the `%time` on arguments of other shapes or dtypes (which compiles again) also
    counts as a warm-up; so does a call inside a function defined earlier, whether it ran or not.
    Not reported, since calling it once first is no remedy there: a first call inside a loop of
    the timed code (one compile among the loop's runs: SGMCMCJax's `%%time` over 2,000 sampler
    steps), and a first call whose result a later cell reads (the one-off run that makes the
    notebook's data, a training or a sweep: a warm-up would run it twice; probml/rebayes's
    ensemble and sweep cells), and `%time jax.jit(f)(x)`, whose jit is written into the timed line
    (its compile is what the line measures: JAX-in-Action's unrolled loop against `lax.scan`).
    A name counts as jitted by its last top-level binding before the timed code. An eager
    `jax.vmap(f)(x)` or `jax.grad(f)(x)` is no jitted call.

    ## Preview
    Reported only with `--preview`: no first-contact finding of it was real (0 of 9 labelled
    on the blind pools; a first call's compile is usually what the author meant to show).

    ## Example
    ```python
    f = jax.jit(lambda x: x @ x)
    x = jnp.ones((1000, 1000))
    %time f(x).block_until_ready()
    ```

    ## Use instead
    ```python
    f = jax.jit(lambda x: x @ x)
    x = jnp.ones((1000, 1000))
    f(x).block_until_ready()  # compile
    %time f(x).block_until_ready()
    ```

    ## Fix safety
    No fix: whether the compile time is what the author meant to measure is theirs to say.

    ## References
    - https://docs.jax.dev/en/latest/faq.html#benchmarking-jax-code
    - https://ipython.readthedocs.io/en/stable/interactive/magics.html#magic-time
    """

    name = "timed-first-call"
    codes = (
        Code("JAX505", "timed-first-call", "`%time` of a jitted function's first call (times its compile)", "never"),
    )
    prefilter = ("%time",)
    valid = (
        Valid(
            """
            import jax
            import jax.numpy as jnp

            f = jax.jit(lambda x: x @ x)
            x = jnp.ones((100, 100))
            f(x).block_until_ready()
            # %time f(x).block_until_ready()
            """
        ),
        Valid(  # near miss: `%timeit` runs it many times
            """
            import jax
            import jax.numpy as jnp

            f = jax.jit(lambda x: x @ x)
            x = jnp.ones((100, 100))
            # %timeit f(x).block_until_ready()
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax
            import jax.numpy as jnp

            f = jax.jit(lambda x: x @ x)
            x = jnp.ones((100, 100))
            # %time f(x).block_until_ready()
            """
        ),
        Invalid(
            """
            import jax
            import jax.numpy as jnp

            @jax.jit
            def step(x):
                return jnp.tanh(x) * 2

            x = jnp.ones(1000)
            # %%time
            y = step(x).block_until_ready()
            """
        ),
    )

    def could_match(self, tree: ast.Module) -> bool:
        return True  # the magics are comments: the text test (`prefilter`) is the screen

    def check(self, ctx: RuleContext) -> Iterator[Finding]:
        notebook = Magics.of(ctx.source, ctx.tree, project_jitted(ctx), project_jit_factory(ctx))
        for item in notebook.timed:
            m = notebook.at(item)
            first = timed_first_call(item, m, ctx.tree)
            if first is None:
                continue
            what = "`%%time` cell" if item.stmt_source is None else "`%time`"
            yield flag(
                m.finding(
                    item,
                    code="JAX505",
                    name=self.name,
                    path=ctx.path,
                    message=(
                        f"{what} of `{callee(first, m.names) or ast.unparse(first.func)}(...)` before it was ever called: "
                        "its one run includes tracing and compiling it; call it once first, or time it with `%timeit`"
                    ),
                ),
                "first-call",
            )


def timed_first_call(item, m: Magics, tree: ast.Module, *, data_runs: bool = False) -> ast.Call | None:
    """The call a `%time`/`%%time` item times that compiles on this run: the first call of a function
    jitted in the text that nothing called before, not a `jax.jit` written into the timed code (whose
    compile is timed on purpose), not one compile among many runs of a loop, and not the run that
    makes the notebook's data (read afterwards) unless `data_runs`. JAX505 reports it (a warm-up
    would run the data-making run twice: not those); JAX504 keeps such an item in preview, data
    runs included, as its one run is mostly the compile (`unblocked_timing_magic`)."""
    if item.magic != "time":
        return None
    first = next((c for c in m.jax_calls(item) if _compiles(c, m)), None)
    if first is None or called_before(first, item, tree, m.timed, m.names):
        return None
    if inline_jit(first, m.names):
        return None
    if in_loop(first, item) or (not data_runs and read_after(first, item, tree)):
        return None
    return first


def _compiles(call: ast.Call, m: Magics) -> bool:
    """A call of a function jitted in the text, or `jax.jit(f)(x)`: an eager `jax.vmap(f)(x)`
    or `jax.grad(f)(x)` compiles no function of its own."""
    if callee(call, m.names) in m.jitted:
        return True
    return isinstance(call.func, ast.Call) and m.names.qualify_ast(call.func.func) in JIT_NAMES


# `TimedFirstCallCommand`: the rule as a libcst codemod, made on first access
__getattr__ = commands_for(TimedFirstCallRule)
