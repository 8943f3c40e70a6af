"""JAX201 jit-in-loop: a compiling transform of a fresh callable inside a loop compiles every
iteration."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import replace

from codemods._command import commands_for
from codemods.jit_placement.factories import factory_calls, screen_admits
from codemods.jit_placement.planner import hoists
from codemods.jit_placement.preview import flag, loop_path, module_def_path
from codemods.jit_placement.screen import sites
from codemods.jit_placement.sites import INCLUDE_TESTS, same_computation_per_trip, skips_test_code, test_code
from jaxfix.analysis.scopes import ScopeIndex
from jaxfix.analysis.trace_screen import MAY_NAME_A_TRANSFORM
from jaxfix.model import Finding, Safety
from jaxfix.rulebase import Code, Invalid, Rule, RuleContext, Valid


class JitInLoopRule(Rule):
    """
    ## What it does
    Finds `jax.jit`, `jax.pmap` and `eqx.filter_jit` (also around `jax.vmap`, `jax.grad`,
    `jax.value_and_grad`, `jax.checkpoint`/`jax.remat`, in any import form) applied inside a
    `for`/`while` body or a comprehension to a callable that is new on every iteration: a
    `lambda`, a `functools.partial(...)`, a nested `def` (also one decorated with `@jax.jit`), a
    bound method `obj.m` or the method of a new object `M(k).m`; called right away
    (`jax.jit(f)(x)`) or bound to a local name that is then only called (`g = jax.jit(f)`,
    `g(x)`). Also a call, inside a loop, of a module function that returns a new jitted function
    every time (a factory: `def make_step(lr):` with a nested `@jax.jit def step` it returns) with
    arguments the loop does not change, whose result the loop calls; and the transform of what
    such a factory returns, a plain nested def the caller jits (`jax.jit(make_step(lr))(x)`),
    with the same condition on its arguments (hand-fix advice only). A memoised factory
    (`functools.cache`) hands out one function and is left alone.

    ## Why is this bad?
    jit caches compiled code per function object. A fresh lambda, partial or nested def is a
    new cache key, so every iteration traces and compiles again: on a 2-core CPU the tutorial
    loop `jax.jit(partial(body))(i)` runs ~1,450x slower than the same loop with the jit
    hoisted.

    ## Known problems
    Only calls made right where the transform is created are reported; a transformed function
    that is stored, returned or passed on may be reused and is left alone. Code that already
    runs under a trace (inside a jitted, vmapped, scanned... function, or a lambda) is not
    reported: a transform there is inlined. A nested def, lambda or partial bound in the function
    above the loop is the same object on every trip: `jax.jit` of it is a cache hit and not
    reported (`filter_jit`'s wrapper is rebuilt each trip: JAX203, manual). Eager `vmap`/`grad`/`checkpoint` without a
    compiling transform retrace on every call whether hoisted or not, so they are not reported
    on their own, but under `jax.jit` they make a new cache key each time even for a
    module-level function (`jax.jit(jax.grad(f))`); equinox's `filter_grad` of a module function
    compares equal and is not new. A `@staticmethod` read off its class or off `self` is the plain
    function, one object (JAX203). The same module-level function re-wrapped in a loop is JAX203, a jitted
    callable made once per call of a function is JAX202. Which values a call passes is inferred
    from the code in this file only. A method of an object the loop builds from what it iterates
    (`for game in games: env = make(game); jax.jit(env.init)`, also from a configuration the body
    builds from it first, `cfg = Config(batch_size=b); synth = Voice(cfg)`, or `partial(solver.m,
    ...)` of such an object) is one configuration per trip, compiled once each, and is not reported; built per
    trip of a `range` counter, or from values the loop does not iterate, it still is. Nor is a
    transform whose options read what the loop iterates (`out_shardings=[specs[i] for i in
    chunk]`), directly or through names the loop body binds from it (`sharding =
    NamedSharding(mesh, spec)`; also in `@partial(jax.jit, out_shardings=sharding)`): each trip
    asks for a different compile either way. So does a call that gives a static argument
    (`static_argnums`/`static_argnames`) a value read from a name the loop rebinds
    (`jax.jit(model.importance, static_argnums=2)(key, obs, (model_size,))` per model size).
    In test code (`test_*.py`, `*_test.py`, `conftest.py`, files under `tests/` or `test/`, and
    methods of a class deriving from a `TestCase` in any file) only the same program compiled again
    on every trip is reported: a bound method (`jax.jit(env.step)(state, action)` per step) or a
    def from above the loop under a new wrapper (`jax.jit(jax.value_and_grad(loss_fn))` per
    optimiser step), which makes a test pay a compile per step. A lambda, partial or def made inside
    the loop is how a test runs one configuration per trip, and a factory's result how it times
    fresh compiles: not reported there. Set `include-tests = true` in
    `[tool.jaxfix.jit-placement]` to report them too.

    ## Preview
    A transform in a `for` loop over values written out in a list or tuple (`for n_steps in (10,
    20, 40):`, also a factory called there) is shown only with `--preview`: such values are
    settings, one compile each whatever the placement (0 real of 2 on heldout14, a sweep over RK4
    step counts and one over solver tolerances; 0 of 2 more on heldout15, measured after), also
    when each trip then runs a loop of steps, and through `UNROLLS + [n]` or `enumerate(zip(...))`
    of such values. So is a callable bound under an `if` in the loop and called on the trips that
    do not rebuild it (`if need_compile: update_jit = jax.jit(...)`: a cache rebuilt when its
    settings change; 0 of 1, heldout18), and a
    jitted `def` that a script's module-level loop defines on every trip (0 real of 2 on two pools:
    a loop over model configurations, each trip's `@jax.jit def update` closing over its own
    optimizer and reused by that trip's training loop). Every other loop is reported by default.

    ## Example
    ```python
    def run(params, batches):
        for batch in batches:
            params = jax.jit(lambda p: update(p, batch))(params)
        return params
    ```

    ## Use instead
    ```python
    _update_jit = jax.jit(lambda p, batch: update(p, batch))


    def run(params, batches):
        for batch in batches:
            params = _update_jit(params, batch)
        return params
    ```

    ## Fix safety
    A factory call is `manual`: call it once before the loop, or memoise the factory with
    `functools.cache` (its arguments must then be hashable). A factory whose arguments change per
    trip (one model or learning rate per iteration) compiles once per configuration by nature
    and is not reported, nor is a memoised one.

    Otherwise the transformed function goes to the nearest place where it is the same object every time,
    value by value (the message says which way each captured value went and why):

    - out of the function, to module level under a new private name: a value the callable
      captured that is an array, a Python number or a container of them becomes a traced
      argument; a hashable non-array value that changes per iteration (a string flag, a frozen
      dataclass, a tuple of ints, an enum member, a module-level function) becomes a
      `static_argnames` entry, as does a value used as a shape, loop bound, slice bound or
      branch flag. A captured float turned into a traced argument may differ in the last bit
      (XLA folds constants) and loses weak typing: equal within a few ULP;
    - behind a cached factory (`functools.cache`) keyed on the hashable values the function
      does not change (a frozen config, a mode string), which stay captured: one compile per
      distinct value;
    - just above the loop, closure intact, when a value cannot leave the function (its kind is
      not known from the file, it is a dict of settings, a list or a closure made in the
      function) but does not change in that loop: one compile per run of the function instead
      of one per iteration. The outermost loop that allows it is chosen; a bound method's wrapper
      goes before the outermost loop where its object does not change.

    The user's options (`static_argnums`, `donate_argnums`, ...) are kept; new arguments are
    appended, so positions do not move. The fix is `safe` when every value's kind is known
    from this file, `unsafe` when a value passed as an argument could be something jit cannot
    take (the message names it), a Python number becomes a traced argument but is handed on to
    code this file does not show (which may need it static: a step count, a shape), a global it
    reads may be rebound, a callable that changes per
    iteration becomes a static argument (each distinct one compiles once), or the loop also
    uses the object of a hoisted bound method; and `manual` when a value that changes per
    iteration can be neither traced nor static (a dict of settings, a list, a mutable
    dataclass), is a function made anew each iteration (as a static argument it would be a new
    cache key every time: pass the arrays it reads instead), the object of a bound method
    changes every iteration, or the shape of the code is not one the fix handles. For
    `jax.jit(M(k).m)(x)` with `M` a pytree class of this file, `jax.jit(M.m)` is hoisted and
    called as `(M(k), x)`: `unsafe`, because the object's fields become traced. `jaxfix fix
    --verify` reports a fix that removes no compile on its inputs as `ineffective` and does not
    write it.

    ## References
    - https://docs.jax.dev/en/latest/jit-compilation.html#caching
    - https://github.com/jax-ml/jax/issues/14183
    """

    name = "jit-in-loop"
    options_table = "jit-placement"  # the family's table before the split: configs naming it stay valid
    options = (INCLUDE_TESTS,)
    codes = (Code("JAX201", "jit-in-loop", "compiling transform of a fresh callable inside a loop", fix="sometimes"),)
    prefilter = ("jit", "pmap")
    prefilter_pattern = MAY_NAME_A_TRANSFORM  # a transform is named only through a jax/equinox import
    valid = (
        Valid(
            """
            import jax

            scale_jit = jax.jit(lambda v, s: v * s)


            def run(x, n):
                for i in range(n):
                    x = scale_jit(x, i)
                return x
            """
        ),
        Valid(
            """
            import jax


            def run(x, n):
                for i in range(n):
                    x = jax.vmap(lambda v: v + i)(x)
                return x
            """
        ),
    )
    invalid = (
        Invalid(
            """
            import jax


            def run(x, n):
                for i in range(n):
                    x = jax.jit(lambda v: v * 2)(x)
                return x
            """,
            fixed="""
            import jax

            _run_lambda_jit = jax.jit(lambda v: v * 2)


            def run(x, n):
                for i in range(n):
                    x = _run_lambda_jit(x)
                return x
            """,
        ),
        Invalid(
            """
            import jax
            import jax.numpy as jnp


            def run(x, sizes):
                for n in sizes:
                    x = jax.jit(lambda v: v + jnp.ones(n))(x)
                return x
            """,
            fixed="""
            import jax
            import jax.numpy as jnp

            _run_lambda_jit = jax.jit(lambda v, n: v + jnp.ones(n), static_argnames=("n",))


            def run(x, sizes):
                for n in sizes:
                    x = _run_lambda_jit(x, n)
                return x
            """,
        ),
        Invalid(
            """
            from dataclasses import dataclass
            from functools import partial

            import jax


            @dataclass(frozen=True)
            class Config:
                mode: str = "l2"


            def loss_fn(cfg, params, batch):
                return params * batch if cfg.mode == "l2" else params + batch


            def train(params, batches, cfg: Config):
                return [jax.jit(partial(loss_fn, cfg))(params, b) for b in batches]
            """,
            fixed="""
            import functools
            from dataclasses import dataclass
            from functools import partial

            import jax


            @dataclass(frozen=True)
            class Config:
                mode: str = "l2"


            def loss_fn(cfg, params, batch):
                return params * batch if cfg.mode == "l2" else params + batch


            @functools.cache
            def _loss_fn_jit(cfg):
                return jax.jit(partial(loss_fn, cfg))


            def train(params, batches, cfg: Config):
                return [_loss_fn_jit(cfg)(params, b) for b in batches]
            """,
        ),
        Invalid(
            """
            from functools import partial

            import jax


            def train(params, batches, cfg, step):
                for batch in batches:
                    params = jax.jit(partial(step, cfg))(params, batch)
                return params
            """,
            fixed="""
            from functools import partial

            import jax


            def train(params, batches, cfg, step):
                step_jit = jax.jit(partial(step, cfg))
                for batch in batches:
                    params = step_jit(params, batch)
                return params
            """,
        ),
    )

    def could_match(self, tree: ast.Module) -> bool:
        """A transform site inside a loop (`screen.sites`), or a call in a loop of a module function
        that may be a factory of jitted functions (`factories.screen_admits`)."""
        return any(site.in_loop for site in sites(tree)) or screen_admits(tree)

    def could_match_in(self, ctx: RuleContext) -> bool:
        """In test code left out by `include-tests` only a transform called in a loop can be
        reported, of what may be the same program each trip (a def decorated in a loop is made
        there, a lambda or partial is one configuration per trip: `same_computation_per_trip`)."""
        return not skips_test_code(ctx, self) or any(
            site.call and site.in_loop and site.same_per_trip for site in sites(ctx.tree)
        )

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        """The planner's sites in a loop whose callable is fresh each time (not a module function);
        in test code only those that compile the same program again (`same_computation_per_trip`)."""
        idx = ctx.fact(ScopeIndex, ScopeIndex.of)
        for hoist in hoists(ctx):
            site = hoist.site
            in_tests = test_code(ctx, self, site)
            if in_tests and not same_computation_per_trip(idx, site):
                continue
            if site.loops and site.fresh:
                text = f"`{site.spelled}` of a fresh {site.described} inside a loop: each one is a new cache key and compiles again; hoist it"
                message, fix = hoist.message(text), hoist.fix
                if in_tests and fix.safety is Safety.SAFE:
                    # a test may count traces or compiles (`jax_explain_cache_misses`, a trace counter)
                    why = "test code, which may count the traces or compiles the loop makes"
                    fix = replace(fix, safety=Safety.UNSAFE, title=f"{fix.title} (unsafe: {why})")
                    message = f"{message} (unsafe: {why})"
                found = ctx.finding(self, "JAX201", site.reported_at, message, fix)
                yield flag(found, module_def_path(idx, site) or loop_path(idx, site.node, site.loops[0]))
        if skips_test_code(ctx, self):
            return
        for made in factory_calls(ctx, idx):
            name = made.factory
            fix = ctx.manual(
                f"call `{name}(...)` once before the loop (its arguments do not change in it), "
                f"or memoise `{name}` with `functools.cache`"
            )
            text = (
                f"`{name}(...)` returns a new jitted {made.made} on every call, and it is called "
                "inside a loop with arguments the loop does not change: each trip compiles again"
            )
            found = ctx.finding(self, "JAX201", made.call, f"{text}; {fix.title}", fix)
            yield flag(found, "factory:" + loop_path(idx, made.call, idx.enclosing_loops(made.call)[0]))


# `JitInLoopCommand`: this rule as a libcst codemod command, made on first access
__getattr__ = commands_for(JitInLoopRule)
