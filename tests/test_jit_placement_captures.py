"""Which way each captured value goes, and where the hoist goes (codemods/jit_placement/captures.py
through the planner): the finding's message says it, the safety follows it."""

from __future__ import annotations

import textwrap

import jax.numpy as jnp
import pytest

from jaxfix.engine import analyze
from jaxfix.engine.config import Config
from jaxfix.model import Safety


def _one(source: str, unsafe: bool = True):
    # preview too: a loop over written-out values (`for count in (1, 2, 4):`, mimic-jax's shape) is a
    # preview path of JAX201 (`codemods/jit_placement/preview.py`); the fixes are what is tested here
    config = Config(select=("JAX2",), unsafe_fixes=unsafe, preview=True)
    result = analyze(textwrap.dedent(source), "m.py", config, fix=True)
    assert result.error is None
    [finding] = result.findings
    return finding, result.fixed_source


def test_message_says_which_way_each_value_went():
    finding, fixed = _one(
        """
        import jax
        import jax.numpy as jnp


        def run(x, scales):
            out = []
            for mode in ("a", "b"):
                for s in scales:
                    w = jnp.ones(3) * s
                    out.append(jax.jit(lambda v: v * w if mode == "a" else v + w)(x))
            return out
        """
    )
    assert finding.fix.safety is Safety.SAFE
    assert "`w` becomes a traced argument (array)" in finding.message
    assert "`mode` becomes a static argument (used as a branch condition; string)" in finding.message
    assert 'static_argnames=("mode",)' in fixed


def test_a_callable_changing_per_iteration_is_never_a_safe_static_argument():
    finding, fixed = _one(
        """
        import jax
        import jax.numpy as jnp


        def run(x):
            return [jax.jit(lambda v: act(v))(x) for act in (jnp.tanh, jnp.sin)]
        """
    )
    assert finding.fix.safety is Safety.UNSAFE
    assert "`act` becomes a static argument" in finding.message
    assert "a callable that changes per iteration compiles once per distinct function" in finding.message


def test_a_fresh_closure_per_iteration_is_manual_never_static():
    finding, fixed = _one(
        """
        import jax
        import jax.numpy as jnp


        def run(x, ys):
            out = []
            for y in ys:
                loss = lambda p: jnp.sum((p - y) ** 2)
                out.append(jax.jit(lambda p: jax.grad(loss)(p))(x))
            return out
        """
    )
    assert finding.fix.safety is Safety.MANUAL and fixed is None
    assert "`loss` is a lambda, a new function object on every iteration" in finding.message
    assert "pass the arrays it reads" in finding.message


def test_a_partial_made_per_call_is_manual_under_jax202():
    # the google-deepmind/mctx shape: a functools.partial and a config built per call
    finding, fixed = _one(
        """
        import functools

        import jax
        import jax.numpy as jnp


        def qvalue(x, scale):
            return x * scale


        def run_policy(x, cfg):
            qtransform = functools.partial(qvalue, scale=cfg["scale"])

            def policy():
                return qtransform(jnp.tanh(x))

            return jax.jit(policy)()


        def act(xs, cfg):
            return [run_policy(x, cfg) for x in xs]
        """
    )
    assert finding.code == "JAX202" and finding.fix.safety is Safety.MANUAL
    assert "`qtransform` is a `partial(...)` made here, a new function object on every call" in finding.message


def test_unknown_kind_stays_captured_above_the_loop_rather_than_traced():
    finding, fixed = _one(
        """
        import jax


        def run(xs, norm):
            return [jax.jit(lambda v: norm(v))(x) for x in xs]
        """
    )
    assert finding.fix.safety is Safety.SAFE
    assert "`norm` stays captured: it does not change in the loop" in finding.message
    assert "    run_lambda_jit = jax.jit(lambda v: norm(v))\n    return [run_lambda_jit(x) for x in xs]" in fixed


def test_jax202_with_unknown_values_stays_unsafe_and_says_why():
    finding, _ = _one(
        """
        import jax


        def apply(x, norm):
            return jax.jit(lambda v: norm(v))(x)


        def train(xs, norm):
            return [apply(x, norm) for x in xs]
        """,
        unsafe=False,
    )
    assert finding.fix.safety is Safety.UNSAFE
    assert "`norm` becomes a static argument (callee); its hashability is not established" in finding.message


def test_a_value_mutated_in_the_loop_does_not_stay_captured():
    finding, fixed = _one(
        """
        import jax


        def run(xs, opts):
            out = []
            for x in xs:
                opts["n"] = len(out)
                out.append(jax.jit(lambda v: v + opts["n"])(x))
            return out
        """
    )
    # `opts` changes in place each iteration: captured above the loop it would be traced once,
    # stale afterwards; as an argument its kind is unknown: unsafe, never the stale closure
    assert "stays captured" not in finding.message
    assert finding.fix.safety is not Safety.SAFE


MIMIC_STEPS = """
import jax
import jax.numpy as jnp


def integrate(state, num_steps):
    if not isinstance(num_steps, int) or num_steps <= 0:
        raise ValueError("num_steps must be a positive Python integer")
    for _ in range(num_steps):
        state = state + 0.1 * jnp.sin(state)
    return state


def sweep(states):
    def fixed_one(state, num_steps):
        return integrate(state, num_steps)

    out = []
    for count in (1, 2, 4):
        runner = jax.jit(jax.vmap(lambda state: fixed_one(state, count)))
        out.append(runner(states))
    return out
"""


def test_a_number_handed_to_code_not_shown_here_becomes_an_unsafe_traced_argument():
    """yipihey/mimic-jax@e16551b scripts/analyze_mini_millennium_adaptive.py:228: the loop's step
    count reaches a nested def and then the project's integrator, which needs a Python int. The
    hoist makes it a traced argument: the fixed script raises where the original ran."""
    finding, fixed = _one(MIMIC_STEPS)
    assert finding.fix.safety is Safety.UNSAFE
    assert "`count` becomes a traced argument (Python number); it is passed on to code" in finding.message
    assert _one(MIMIC_STEPS, unsafe=False)[1] is None  # a plain `fix --write` leaves it as it is
    states = jnp.ones((3, 2))
    original, rewritten = {}, {}
    exec(compile(MIMIC_STEPS, "m.py", "exec"), original)
    exec(compile(fixed, "m.py", "exec"), rewritten)
    assert len(original["sweep"](states)) == 3
    with pytest.raises(ValueError, match="positive Python integer"):
        rewritten["sweep"](states)


def test_a_number_used_only_as_a_number_stays_a_safe_traced_argument():
    """The twin: the count is only arithmetic in a def of this file, so a traced copy computes the same."""
    source = textwrap.dedent(
        """
        import jax


        def fixed_one(state, num_steps):
            return state * num_steps


        def sweep(states):
            out = []
            for count in (1, 2, 4):
                runner = jax.jit(jax.vmap(lambda state: fixed_one(state, count)))
                out.append(runner(states))
            return out
        """
    )
    finding, fixed = _one(source)
    assert finding.fix.safety is Safety.SAFE
    assert "`count` becomes a traced argument (Python number)" in finding.message


def test_a_lambda_whose_default_reads_a_loop_name_is_hoisted_by_hand():
    """`jax.jit(lambda t, impl=fn: impl(0.4, t))` per trip of `for name, fn in variants.items()`
    (philipjones77/arbPlusJAX tests/test_bessel_jax_contract.py:95): the default is evaluated
    where the lambda is made, so the lambda hoisted to module level read an unbound `fn` (a
    NameError at import, offered as a safe fix before). A default reading a module name still
    hoists."""
    source = """
        import jax
        import jax.numpy as jnp


        def check(variants, z):
            for name, fn in variants.items():
                jit_fn = jax.jit(lambda t, impl=fn: impl(0.4, t))
                assert jnp.isfinite(jit_fn(z))
        """
    finding, fixed = _one(source)
    assert finding.fix.safety is Safety.MANUAL
    assert "the lambda's defaults read local `fn`" in finding.message
    assert fixed is None or "impl=fn" in fixed.split("def check")[1]
    twin, fixed = _one(source.replace("impl=fn", "impl=jnp.sin").replace("for name, fn in", "for name, _ in"))
    assert twin.fix.safety is not Safety.MANUAL
    assert "jax.jit(lambda t, impl=jnp.sin" in fixed.split("def check")[0]
