"""JAX201 on a factory of jitted functions called once per trip (issue #33, item 8: "a wrapper
that returns a jitted closure" was missed). A module function that returns a new jitted closure
hands out a new cache key per call; with arguments the loop does not change, every trip compiles
a function that did not change. Compile counts are measured with the real jax on CPU; the
negatives (a factory per configuration, a memoised one, one that re-wraps a module function, a
result not called in the loop, a loop under a trace) stay silent."""

from __future__ import annotations

import textwrap
from pathlib import Path

import jax.numpy as jnp
import pytest
from fixture_cases import count_compiles, load_as_module

from jaxfix.engine import analyze
from jaxfix.engine.config import Config

FACTORY = """
import functools

import jax
import jax.numpy as jnp


def make_step(scale):
    @jax.jit
    def step(x):
        return x * scale

    return step


def make_update(scale):
    return jax.jit(lambda x: x + scale)


def run(x, n):
    for _ in range(n):
        step = make_step(2.0)
        x = step(x)
    return x


def run_inline(x, n):
    for _ in range(n):
        x = make_update(1.0)(x)
    return x


def run_hoisted(x, n):
    step = make_step(2.0)
    for _ in range(n):
        x = step(x)
    return x
"""


def _codes(source: str) -> list[tuple[str, int, str]]:
    result = analyze(textwrap.dedent(source), "train.py", Config(select=("JAX2",), preview=True), fix=False)
    assert result.error is None, result.error
    return sorted((f.code, f.line, f.fix.safety.value if f.fix else "none") for f in result.findings)


def test_a_factory_called_per_trip_with_unchanged_arguments_is_reported_manual():
    assert _codes(FACTORY) == [("JAX201", 22, "manual"), ("JAX201", 29, "manual")]


def test_the_message_names_the_factory_and_the_way_out():
    result = analyze(textwrap.dedent(FACTORY), "train.py", Config(select=("JAX201",), preview=True), fix=False)
    message = result.findings[0].message
    assert "`make_step(...)` returns a new jitted function `step` on every call" in message
    assert "once before the loop" in message and "functools.cache" in message


def test_compiles_measured_one_per_trip_against_one_hoisted():
    module = load_as_module(Path("factory.py"), FACTORY)
    x = jnp.ones(3)
    assert count_compiles(lambda: module.run(x, 4)) == 4  # a new closure per trip: a compile per trip
    assert count_compiles(lambda: module.run_inline(x, 4)) == 4
    assert count_compiles(lambda: module.run_hoisted(x, 4)) == 1
    assert jnp.allclose(module.run(x, 3), module.run_hoisted(x, 3))


NEGATIVES = {
    # one compile per configuration is inherent: the argument changes every trip
    "per_configuration": """
        import jax

        def make_step(lr):
            @jax.jit
            def step(x):
                return x * lr
            return step

        def sweep(x, lrs):
            for lr in lrs:
                step = make_step(lr)
                x = step(x)
            return x
    """,
    # memoised: the same jitted function for the same arguments
    "memoised": """
        import functools
        import jax

        @functools.lru_cache(maxsize=None)
        def make_step(scale):
            return jax.jit(lambda x: x * scale)

        def run(x, n):
            for _ in range(n):
                x = make_step(2.0)(x)
            return x
    """,
    # re-wrapping one module function is a cache hit (JAX203's business, not a new function)
    "module_function": """
        import jax

        def double(x):
            return x * 2

        def make_step():
            return jax.jit(double)

        def run(x, n):
            for _ in range(n):
                x = make_step()(x)
            return x
    """,
    # the result is kept, not called in the loop
    "stored": """
        import jax

        def make_step(scale):
            return jax.jit(lambda x: x * scale)

        def build(n):
            steps = []
            for _ in range(n):
                steps.append(make_step(2.0))
            return steps
    """,
    # the loop runs inside a jitted function: the inner jit is inlined into that one trace
    "under_trace": """
        import jax

        def make_step(scale):
            return jax.jit(lambda x: x * scale)

        @jax.jit
        def run(x):
            for _ in range(3):
                x = make_step(2.0)(x)
            return x
    """,
    # not a factory: it returns an array
    "plain_helper": """
        import jax

        def apply(x, scale):
            return jax.jit(lambda v: v * scale)(x)

        def run(x, n):
            for _ in range(n):
                x = apply(x, 2.0)
            return x
    """,
}


@pytest.mark.parametrize("name", sorted(NEGATIVES))
def test_factories_that_do_not_recompile_needlessly_are_not_reported(name):
    result = analyze(textwrap.dedent(NEGATIVES[name]), "train.py", Config(select=("JAX2",), preview=True), fix=False)
    assert result.error is None, result.error
    assert [f.line for f in result.findings if "returns a new jitted function" in f.message] == []


# The research-script shape `jax.jit(make_train_step(cfg, lr))(params, batch)` in the step loop: the
# factory returns a plain nested def (jitted by the caller, not by the factory), new on every call.
JITTED_BY_CALLER = """
import functools

import jax


def make_step(scale):
    def step(x):
        return x * scale

    return step


@functools.cache
def make_cached(scale):
    def step(x):
        return x * scale

    return step


def run(x, n):
    for _ in range(n):
        x = jax.jit(make_step(2.0))(x)
    return x


def sweep(x, scales):
    for scale in scales:
        x = jax.jit(make_step(scale))(x)  # one compile per setting: inherent
    return x


def run_cached(x, n):
    for _ in range(n):
        x = jax.jit(make_cached(2.0))(x)  # memoised: one function, one compile
    return x


def run_hoisted(x, n):
    step = jax.jit(make_step(2.0))
    for _ in range(n):
        x = step(x)
    return x
"""


def test_a_factorys_plain_def_jitted_per_trip_by_the_caller_is_reported_manual():
    assert _codes(JITTED_BY_CALLER) == [("JAX201", 24, "manual")]
    result = analyze(textwrap.dedent(JITTED_BY_CALLER), "train.py", Config(select=("JAX201",), preview=True), fix=False)
    assert "`make_step(...)` returns a new `step` on every call" in result.findings[0].message
    module = load_as_module(Path("jitted_by_caller.py"), JITTED_BY_CALLER)
    x = jnp.ones(3)
    assert count_compiles(lambda: module.run(x, 4)) == 4  # a new closure per trip: a compile per trip
    assert count_compiles(lambda: module.run_cached(x, 4)) == 1
    assert count_compiles(lambda: module.run_hoisted(x, 4)) == 1
    assert count_compiles(lambda: module.sweep(x, [1.0, 2.0, 3.0])) == 3  # inherent, not reported
    assert jnp.allclose(module.run(x, 3), module.run_hoisted(x, 3))


# FLAIROx/JaxMARL@c793d09 baselines/QLearning/iql_cnn_overcooked.py:563-576 (wandb sweep agent, called
# once per trial with a new config) and mttga/purejaxql pqn_mujoco_playground.py:842-853 (a loop
# that stores each setting into `config`): a new configuration per call or trip, one compile each
SWEEP_AGENT = """
import copy

import jax

default_config = {"LR": 0.1}


def make_train(config):
    def train(rng):
        return rng * config["LR"]

    return train


def wrapped_make_train(overrides):
    config = copy.deepcopy(default_config)
    for k, v in overrides.items():
        config[k] = v
        train_vjit = jax.jit(jax.vmap(make_train(config)))
        train_vjit(jax.numpy.ones(2))
    train_jit = jax.jit(make_train(config))
    return train_jit(1.0)


def agent(trials):
    for overrides in trials:
        wrapped_make_train(overrides)
"""


def test_a_factory_given_a_new_configuration_per_call_or_trip_is_not_reported():
    assert _codes(SWEEP_AGENT) == []
    # the twin: the same module-level configuration on every call of the per-trial function
    twin = SWEEP_AGENT.replace(
        "train_jit = jax.jit(make_train(config))", "train_jit = jax.jit(make_train(default_config))"
    )
    assert _codes(twin) == [("JAX202", 22, "manual")]


def test_a_factory_given_a_configuration_changed_in_place_per_trip_is_not_reported():
    # one question for `step = make_step(cfg)` in a loop and `jax.jit(make_train(cfg))`
    # (`per_configuration.same_values_per_trip`): a loop that stores into what the arguments read
    # (`cfg["scale"] = s`, a sweep over settings) makes a new configuration per trip; reading an
    # attribute whose name the loop also binds (`cfg.scale` beside a loop variable `scale`) does not
    sweep = FACTORY + textwrap.dedent(
        """

        def run_sweep(x, cfg, scales):
            for scale in scales:
                cfg["scale"] = scale
                step = make_step(cfg)
                x = step(x)
            return x
        """
    )
    assert ("JAX201", 43) not in [(code, line) for code, line, _ in _codes(sweep)]
    same = sweep.replace('cfg["scale"] = scale', "print(scale)").replace("make_step(cfg)", "make_step(cfg.scale)")
    assert ("JAX201", 43, "manual") in _codes(same)
