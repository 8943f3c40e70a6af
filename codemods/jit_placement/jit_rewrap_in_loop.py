"""JAX203 jit-rewrap-in-loop: the same module-level function wrapped by jit again on every
iteration of a loop."""

from __future__ import annotations

import ast
from collections.abc import Iterable

from codemods._command import commands_for
from codemods.jit_placement.planner import hoists
from codemods.jit_placement.preview import flag, loop_path
from codemods.jit_placement.screen import sites
from codemods.jit_placement.sites import INCLUDE_TESTS, skips_site, skips_test_code
from jaxfix.analysis.scopes import ScopeIndex
from jaxfix.analysis.trace_screen import MAY_NAME_A_TRANSFORM
from jaxfix.model import Finding
from jaxfix.rulebase import Code, Invalid, Rule, RuleContext, Valid


class JitRewrapInLoopRule(Rule):
    """
    ## What it does
    Finds `jax.jit`, `jax.pmap` or `eqx.filter_jit` (also around `eqx.filter_grad`, which
    compares equal for the same function; `jax.grad`/`jax.vmap` make a new function each time,
    which is JAX201) applied inside a `for`/`while` body or a comprehension to a function that is
    the same object every time: a function bound once at module level (`jax.jit(f)(x)`) or an attribute of an
    imported module (`jax.jit(jnp.sin)(x)`), called right away or bound to a local name that
    is then only called; also `eqx.filter_jit(fn)(batch)` per batch with `fn` a parameter of the
    function (or one given its default above the loop: `if fn is None: fn = Loss()`), which
    equinox wraps anew on every trip (manual: wrap it once before the loop).

    ## Why is this bad?
    The function is the same object, so jit finds its compiled code in the cache and does not
    compile again; but every iteration builds a new jitted wrapper and looks it up, which costs
    ~3x the dispatch of calling one wrapper made once.

    ## Known problems
    Only calls made right where the wrapper is created are reported; a wrapper that is stored,
    returned or passed on is left alone, and so is code that already runs under a trace. Outside
    loops the same pattern costs one wrapper per call and is not reported.
    Test code (`test_*.py`, `*_test.py`, `conftest.py`, files under `tests/` or `test/`, and
    methods of a class deriving from a `TestCase` in any file) is not reported: tests and their
    helpers build fresh jitted wrappers on purpose to exercise jit, and each test runs once.
    Set `include-tests = true` in `[tool.jaxfix.jit-placement]` to report it.

    ## Preview
    Reported by default in a `while` loop or a `for` over `range(n)` with more than 10 (or a
    computed number of) trips (3 real, 1 debatable on the blind pools). With `--preview` only: a
    `range(n)` of at most 10 trips, a loop over another iterable, a re-wrap under an `if` in the
    loop, and a loop that also runs another loop (3 real of 9 together): a cache hit costs only
    dispatch, which a short or occasional loop does not repeat enough to matter.

    ## Example
    ```python
    def run(x, n):
        for i in range(n):
            x = jax.jit(step)(x)
        return x
    ```

    ## Use instead
    ```python
    _step_jit = jax.jit(step)


    def run(x, n):
        for i in range(n):
            x = _step_jit(x)
        return x
    ```

    ## Fix safety
    Safe: the wrapper is made once at module level, before the function (or the module-level
    loop) that holds the loop, with the transform's options as written, and every call in the
    loop calls it; the function and its options are the same objects on every iteration, so
    the calls compute the same thing. The fix is `manual` when the function's name is bound
    more than once at module level (which binding the wrapper would see depends on where it
    goes), a name it needs is bound only after that point, or an option reads a value that is
    local or changes per iteration.

    ## References
    - https://docs.jax.dev/en/latest/jit-compilation.html#caching
    """

    name = "jit-rewrap-in-loop"
    options_table = "jit-placement"  # the family's table before the split: configs naming it stay valid
    options = (INCLUDE_TESTS,)
    codes = (
        Code("JAX203", "jit-rewrap-in-loop", "module-level function re-wrapped by jit inside a loop", fix="sometimes"),
    )
    prefilter = ("jit", "pmap")
    prefilter_pattern = MAY_NAME_A_TRANSFORM  # a transform is named only through a jax/equinox import
    valid = (
        Valid(
            """
            import jax


            @jax.jit
            def step(v):
                return v + 1


            def run(xs):
                return [step(x) for x in xs]
            """
        ),
        Valid(
            """
            import jax
            import jax.numpy as jnp


            def run(x, n):
                while n > 0:
                    x, n = jax.vmap(jnp.sin)(x), n - 1
                return x
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax


            def step(v):
                return v + 1


            def run(xs):
                ys = []
                for x in xs:
                    ys.append(jax.jit(step)(x))
                return ys
            """,
            fixed="""
            import jax


            def step(v):
                return v + 1


            _step_jit = jax.jit(step)


            def run(xs):
                ys = []
                for x in xs:
                    ys.append(_step_jit(x))
                return ys
            """,
        ),
        Invalid(
            """
            import jax
            import jax.numpy as jnp


            def run(xs):
                return [jax.jit(jnp.sin)(x) for x in xs]
            """,
            fixed="""
            import jax
            import jax.numpy as jnp

            _sin_jit = jax.jit(jnp.sin)


            def run(xs):
                return [_sin_jit(x) for x in xs]
            """,
        ),
    )

    def could_match(self, tree: ast.Module) -> bool:
        """A transform call inside a loop (`screen.sites`); a decorated def is never the same function."""
        return any(site.in_loop and site.call for site in sites(tree))

    def could_match_in(self, ctx: RuleContext) -> bool:
        """Not test code left out by `include-tests` (`check` reports nothing there)."""
        return not skips_test_code(ctx, self)

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        """The planner's sites in a loop whose callable is a module function: a cache hit per iteration."""
        if skips_test_code(ctx, self):
            return
        idx = ctx.fact(ScopeIndex, ScopeIndex.of)
        for hoist in hoists(ctx):
            site = hoist.site
            if skips_site(ctx, self, site):
                continue
            if site.loops and not site.fresh:
                text = f"`{site.spelled}` re-wraps the same function inside a loop: a cache hit, but it pays dispatch every iteration; hoist it"
                found = ctx.finding(self, "JAX203", site.reported_at, hoist.message(text), hoist.fix)
                yield flag(found, loop_path(idx, site.node, site.loops[0]))


# `JitRewrapInLoopCommand`: this rule as a libcst codemod command, made on first access
__getattr__ = commands_for(JitRewrapInLoopRule)
