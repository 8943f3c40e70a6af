"""JAX202 jit-per-call: a compiling transform of a callable created in the same function body
compiles on every call of the function."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import replace

from codemods._command import commands_for
from codemods.jit_placement.planner import hoists
from codemods.jit_placement.preview import flag, repeat_path
from codemods.jit_placement.screen import sites
from codemods.jit_placement.sites import INCLUDE_TESTS, skips_site, skips_test_code
from jaxfix.analysis.scopes import ScopeIndex
from jaxfix.analysis.trace_screen import MAY_NAME_A_TRANSFORM
from jaxfix.analysis.value_kinds import ValueKinds
from jaxfix.model import Finding, Safety
from jaxfix.rulebase import Code, Invalid, Rule, RuleContext, Valid


class JitPerCallRule(Rule):
    """
    ## What it does
    Finds `jax.jit`, `jax.pmap` and `eqx.filter_jit` (also around `jax.vmap`, `jax.grad`, ...)
    applied, in a function body and outside any loop, to a callable made in that body (a
    `lambda`, a `functools.partial(...)`, a nested `def`, also one decorated with `@jax.jit`, a
    bound method `obj.m` or the method of a new object `M(k).m`) and called there:
    `jax.jit(f)(x)`, or a local name bound once to `jax.jit(f)` and only called.

    ## Why is this bad?
    jit caches compiled code per function object, and the callable is a new object on every
    call of the function: each call traces and compiles again, however often the function is
    called with the same shapes. A function called in a training or serving loop pays a
    compile per step.

    ## Known problems
    "Compiles on every call" needs a second call. A function of the module (or a def nested in
    one) is reported only when the code shows it running again: called in a loop by its own
    name, handed on as a callback to a library or an object (`scipy.optimize.minimize(objective,
    x0)`, a key handler; not to a transform, whose trace inlines the inner jit), stored on an
    object for later calls, or called from such a callback. Handed to a function or class of the
    project itself, or returned, it is not taken for a callback: on code nobody tuned on those ran
    once (a set-up helper taking a model factory, long-range-arena's `get_model(...,
    create_model)`; a registry of one-shot diagnostics; a deprecation alias; a wrapper factory's
    result), 0 real of 11 findings on three pools. Without that, whether anyone calls it twice is
    unknown, and on code nobody tuned on it was mostly one-shot set-up (a `setup_initial_state`,
    a `shard_params_from_config`, a script's `prefill`): a public helper that users call per step
    from other modules is missed (jax-ml/jax#2251's `pandemic_scan`). A method, whose callers (an
    engine, a trainer hook, an environment's `step`, a library's public API) are usually
    elsewhere, is reported without that evidence, its fix `unsafe`: requiring it lost as many
    real findings as wrong ones on the blind pools (fortuna's per-call `@jit def _entropy_term`
    against one-shot `initialize_model`s). When folders are checked (`jaxfix check .`, an
    editor's workspace) a method that no module of the project calls or passes on, by its name,
    tests included, is not reported (an exported one-shot utility: EasyDeL's `fully_shard`);
    checked alone, in a list of files (pre-commit's changed files) or in a tree of one module, it is. A method only
    notebooks or other projects call is missed. Nor
    is a set-up function without such evidence: `init`, `initialize`, `initialization`,
    `init_model*`, `from_restart*`/`from_checkpoint*`/`from_pretrained*`/`from_config*`/
    `from_initial*`, `create_model*`, `create_train_state*` build state once per object, model
    or run, like `__init__` (algoperf's `init_model_fn`, QDax's `PBTEmitter.init`): one that is
    per step despite its name is missed. Other `init_*` are not set-up by name (maxtext's
    per-request `init_decode_state`).
    Two call sites are not evidence (two one-shot set-up paths), nor is a caller that runs
    again (each call was one configuration on the blind pools), nor a loop over a list or tuple
    of settings (strings, `True`/`False`/`None`) written out in the code that passes each item
    (`for prime in [False, True]: run(prime)`, one configuration per trip; numbers are data). Not reported inside pytest tests (`test*`), `main` or `train_and_evaluate` (flax's examples),
    which run once (a loop inside them is still JAX201), nor in a function the module calls
    exactly once, outside loops, from one of those or (in a script, a module with a `__main__`
    block) from its top level (`main` -> `train_and_evaluate` -> `initialize_model`), nor in `__init__`, which runs once per instance and is the usual place to
    build jitted callables. A local `g = jax.jit(f)` made once per call and called inside a
    loop there is a reuse of one jitted object (one compile per call, amortised over the loop)
    and is left alone, as is a transformed function that is stored, returned or passed on,
    except `self.f = jax.jit(...)` in a method that this module calls on the same object once
    per loop iteration (reported, manual). A `@jax.jit` nested def called in a loop of the same
    body is reused there the same way and left alone. A jitted nested def that is only called, directly or
    through `jax.grad(f)(x)`/`eqx.filter_grad(f)(m)`, is reported (manual when a wrapper uses
    it); one decorated with `eqx.debug.assert_max_traces`/`chex.assert_max_traces` is a harness
    that counts its traces on purpose and is not. Code that already runs under a trace is not
    reported: a transform there is inlined; so is a module function every call of which in this
    file is in traced code. Nor is a one-shot driver: a function whose own body runs a
    `for`/`while` loop or a `lax.scan`/`fori_loop`/`while_loop` (a `train` or `evaluate` that
    builds its jitted callables once and runs them many times) unless this module calls it in a
    loop or from two places. A jitted local
    called only from a nested def is a closure's (`variable_jit` returning a wrapper): reused,
    not reported. `jax.pmap` and `eqx.filter_jit` cache a bound method of the same object
    (equality, not identity; `jax.jit` does not), and `eqx.filter_jit` the bound method of an
    `eqx.Module` whatever the instance: not reported. Which values a call passes is inferred
    from the code in this file only.
    Test code (`test_*.py`, `*_test.py`, `conftest.py`, files under `tests/` or `test/`, and
    methods of a class deriving from a `TestCase` in any file) is not reported: tests and their
    helpers build fresh jitted wrappers on purpose to exercise jit, and each test runs once.
    Set `include-tests = true` in `[tool.jaxfix.jit-placement]` to report it.

    ## Preview
    Reported by default when this module calls the function in a `while` loop, a `for` over
    `range(...)` or a comprehension (6 real, 1 wrong on the blind pools). With `--preview` only: a
    function called only in `for` loops over other iterables or written-out values (files, views,
    table cells, splits: one configuration per item, which compiles anyway; 3 real, 10 wrong, 2
    debatable on seven pools), a function the module calls in no loop, only hands on as a callback
    or stores (5 real, 5 wrong on four pools: a function run only inside a numpyro model, which
    NUTS traces once, inlines the fresh jit), a method without such a caller in the module (its
    callers are elsewhere, per step or once; 8 real, 4 wrong, 4 debatable on eight pools), and a
    jit in a branch that no call of the function in this module takes (the fallback after `if
    forward_fn is not None: return forward_fn(x)` when every call passes `forward_fn`; a flag every
    call passes `False`): it runs only for a caller the module does not show (0 real, 1 wrong,
    heldout20, found after its measurement).

    ## Example
    ```python
    def step(x):
        return jax.jit(partial(update, lr=0.1))(x)


    def train(xs):
        return [step(x) for x in xs]
    ```

    ## Use instead
    ```python
    _update_jit = jax.jit(partial(update, lr=0.1))


    def step(x):
        return _update_jit(x)


    def train(xs):
        return [step(x) for x in xs]
    ```

    ## Fix safety
    The transformed callable leaves the function (the message says which way each captured
    value went and why):

    - to module level under a new private name (a nested `def` moves with it): a captured array,
      Python number or container of them becomes a traced argument (a nested def takes it as a
      new trailing parameter), a value used as a shape, loop bound, slice bound or branch flag a
      `static_argnames` entry;
    - behind a cached factory (`functools.cache`) keyed on the hashable non-array values it
      captures from the function (a frozen config, a mode string, an enum member, a module-level
      function), which stay captured: one jitted function per distinct value.

    For a local `g = jax.jit(f)` the binding line is removed and every `g(...)` calls the
    hoisted name: exact, since a closure reads the captured values at call time too. A
    `partial` evaluates its bound values at the binding: if one of them changes before a call,
    the fix is `manual`.

    The fix is `safe` only when this module shows the function running more than once (called
    in a loop or from two places): a method or callback without such a caller here keeps an
    exact hoist that may remove no compile, and is `unsafe` (the message says so). Then it is
    `safe` when every captured value's kind is known from this file (literals,
    constructors of this file's classes, annotations, defaults and the values passed at the
    function's call sites in this file), `unsafe` when a value passed as an argument could be
    something jit cannot take, a Python number made a traced argument is handed on to code this
    file does not show, or a global it reads may be rebound (the message says which), and
    `manual` when a captured value can be neither traced nor static (a dict of settings, a list,
    a mutable dataclass), is a function made in the function (a nested def, a lambda, a
    `partial`: as a static argument it would be a new cache key on every call), the callable is
    a bound method of an existing object (jit `Cls.method` once instead), or the shape of the
    code is not one the fix handles. For `jax.jit(M(k).m)(x)` with `M` a pytree class of this
    file, `jax.jit(M.m)` is hoisted and called as `(M(k), x)`: `unsafe`, because the object's
    fields become traced (a field used as a shape or Python branch fails to trace); when `M` is
    not a pytree it is `manual`. `jaxfix fix --verify` reports a fix that removes no compile on
    its inputs as `ineffective` and does not write it.

    ## References
    - https://docs.jax.dev/en/latest/jit-compilation.html#caching
    - https://github.com/jax-ml/jax/issues/14183
    """

    name = "jit-per-call"
    uses_project = True  # whether any module of the project calls a method (`ProjectIndex.references`)
    options_table = "jit-placement"  # the family's table before the split: configs naming it stay valid
    options = (INCLUDE_TESTS,)
    codes = (
        Code(
            "JAX202",
            "jit-per-call",
            "compiling transform of a callable created in the same function body",
            fix="sometimes",
        ),
    )
    prefilter = ("jit", "pmap")
    prefilter_pattern = MAY_NAME_A_TRANSFORM  # a transform is named only through a jax/equinox import
    valid = (
        Valid(
            """
            import jax


            def main():
                return jax.jit(lambda v: v * 2)(1.0)
            """
        ),
        Valid(
            """
            import jax


            def run(xs):
                double = jax.jit(lambda v: v * 2)
                for x in xs:
                    double(x)
            """
        ),
    )
    invalid = (
        Invalid(
            """
            from functools import partial

            import jax


            def update(x, lr):
                return x - lr * x


            def step(x):
                return jax.jit(partial(update, lr=0.1))(x)


            def train(xs):
                return [step(x) for x in xs]
            """,
            fixed="""
            from functools import partial

            import jax


            def update(x, lr):
                return x - lr * x


            _update_jit = jax.jit(partial(update, lr=0.1))


            def step(x):
                return _update_jit(x)


            def train(xs):
                return [step(x) for x in xs]
            """,
        ),
        Invalid(
            """
            import jax


            def step(x, k):
                def scale(v):
                    return v * k

                return jax.jit(scale)(x)


            def train(xs, k):
                return [step(x, k) for x in xs]
            """,
            fixed="""
            import jax


            def scale(v, k):
                return v * k


            _scale_jit = jax.jit(scale)


            def step(x, k):
                return _scale_jit(x, k)


            def train(xs, k):
                return [step(x, k) for x in xs]
            """,
        ),
        Invalid(
            """
            import jax


            def step(model, x):
                return jax.jit(model.apply)(x)


            def train(model, xs):
                return [step(model, x) for x in xs]
            """,
        ),
        Invalid(
            """
            import jax
            import jax.numpy as jnp


            def normalize(x, mode: str = "l2"):
                return jax.jit(lambda v: v / jnp.linalg.norm(v) if mode == "l2" else v / jnp.sum(v))(x)


            def normalize_all(xs):
                return [normalize(x) for x in xs]
            """,
            fixed="""
            import functools

            import jax
            import jax.numpy as jnp


            @functools.cache
            def _normalize_lambda_jit(mode):
                return jax.jit(lambda v: v / jnp.linalg.norm(v) if mode == "l2" else v / jnp.sum(v))


            def normalize(x, mode: str = "l2"):
                return _normalize_lambda_jit(mode)(x)


            def normalize_all(xs):
                return [normalize(x) for x in xs]
            """,
        ),
    )

    def could_match(self, tree: ast.Module) -> bool:
        """A transform site in the body of a function called more than once (`screen.sites`)."""
        return any(site.per_call for site in sites(tree))

    def could_match_in(self, ctx: RuleContext) -> bool:
        """Not test code left out by `include-tests` (`check` reports nothing there)."""
        return not skips_test_code(ctx, self)

    def check(self, ctx: RuleContext) -> Iterable[Finding]:
        """The planner's sites outside loops: the function body makes the callable on each call."""
        if skips_test_code(ctx, self):
            return
        idx = ctx.fact(ScopeIndex, ScopeIndex.of)
        for hoist in hoists(ctx):
            site = hoist.site
            if skips_site(ctx, self, site):
                continue
            if not site.loops:
                where = f"inside `{site.function.name.value}` on every call"
                text = f"`{site.spelled}` of a fresh {site.described} {where}: each one is a new cache key and compiles again; hoist it"
                message, fix = hoist.message(text), hoist.fix
                if fix.safety is Safety.SAFE and not site.repeats:
                    # the hoist is exact, but that it removes a compile rests on callers this file does not show
                    why = f"this module never calls `{site.function.name.value}` more than once"
                    fix = replace(fix, safety=Safety.UNSAFE, title=f"{fix.title} (unsafe: {why})")
                    message = f"{message} (unsafe: {why})"
                found = ctx.finding(self, "JAX202", site.reported_at, message, fix)
                path = repeat_path(idx, site.function, site.node, ValueKinds.of(ctx)) if site.repeats else "method"
                yield flag(found, path)


# `JitPerCallCommand`: this rule as a libcst codemod command, made on first access
__getattr__ = commands_for(JitPerCallRule)
