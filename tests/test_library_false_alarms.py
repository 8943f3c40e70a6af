"""Shapes of correct code in mature JAX libraries that jaxfix once reported (issue #20: no
false alarms). Each case names the code it was reduced from; the buggy variant beside it must
still be reported, so a case cannot pass by the rule going quiet."""

from __future__ import annotations

import textwrap

from jaxfix.engine import analyze
from jaxfix.engine.config import Config


def codes(source: str, path: str = "lib.py", options: dict | None = None) -> list[tuple[str, int]]:
    config = Config(select=("ALL",))
    for table, values in (options or {}).items():
        config = config.with_options(table, **values)
    result = analyze(textwrap.dedent(source), path, config, fix=False)
    assert result.error is None, result.error
    return sorted((f.code, f.line) for f in result.findings)


def test_a_parameter_shadows_an_outer_def_of_the_same_name():
    """equinox tests/test_closure_to_pytree.py: `run(f, y)` calls its argument `f`, not the
    test's outer `f(flag)`, whose `if flag:` runs eagerly."""
    source = """
        import jax

        def test_closure():
            def f(flag):
                if flag:
                    return 1
                return 2

            @jax.jit
            def run(%s, y):
                return f(y)
        """
    assert codes(source % "f") == []
    assert codes(source % "g") == [("JAX301", 6)]  # no parameter `f`: `run` calls the outer `f`


def test_filter_jit_keeps_a_literal_passed_at_every_call_static():
    """equinox tests/test_while_loop.py: `run(x, true=True)` under `eqx.filter_jit` (non-arrays are
    static there); under `jax.jit` the same literal becomes a traced bool."""
    source = """
        import equinox as eqx
        import jax

        @eqx.filter_jit
        def run(x, true):
            if true:
                return x + 1
            return x

        @jax.jit
        def run_jit(x, true):
            if true:
                return x + 1
            return x

        a = run(1.0, true=True)
        b = run(1.0, true=False)
        c = run_jit(1.0, True)
        """
    assert codes(source) == [("JAX301", 13)]


def test_dunder_attributes_are_static():
    """equinox tests/test_module.py: `assert k.__name__ == "f"` inside a jitted function."""
    source = """
        import jax

        @jax.jit
        def check(k, x):
            assert k.__name__ == "f"
            assert x.sum() > 0
            return x
        """
    assert codes(source) == [("JAX305", 7)]


def test_trace_counters_in_test_code_are_left_alone():
    """equinox tests/test_jit.py: `nonlocal num_traces; num_traces += 1` counts traces on purpose.
    A tracer stored the same way still leaks, and the option brings the counters back."""
    source = """
        import jax

        def test_traces():
            num_traces = 0
            last = None

            @jax.jit
            def f(x):
                nonlocal num_traces, last
                num_traces += 1
                last = x
                return x

            f(1.0)
            assert num_traces == 1
        """
    assert codes(source, path="tests/test_jit.py") == [("JAX404", 12)]
    assert codes(source, path="model.py") == [("JAX404", 11), ("JAX404", 12)]
    counted = codes(source, path="tests/test_jit.py", options={"outer-state-mutation-in-traced-code": {"include-tests": True}})
    assert counted == [("JAX404", 11), ("JAX404", 12)]


def test_a_conversion_guarded_by_a_tracer_test_is_not_reported():
    """equinox `branched_error_if_impl`: `.item()` only where `not isinstance(p, jax.core.Tracer)`."""
    source = """
        import jax

        @jax.jit
        def f(x, pred):
            if not isinstance(pred, jax.core.Tracer):
                pred = pred.item()
            n = int(x) if not isinstance(x, jax.core.Tracer) else 0
            return x + pred + n + int(pred)
        """
    assert codes(source) == [("JAX304", 9)]
