"""jit-placement on a jit bound to a local name (`f = jax.jit(...)`, then `f(x)`) and on the
bound method of a new object (`jax.jit(M(k).apply)`): which shapes are reported, which are
left alone, and why a fix is manual. Behaviour and compile counts live in the fixtures."""

from __future__ import annotations

import textwrap

from jaxfix.engine import analyze
from jaxfix.engine.config import Config


def _fix(code: str, unsafe: bool = False):
    return analyze(textwrap.dedent(code), "t.py", Config(select=("JAX2",), unsafe_fixes=unsafe), fix=True)


def _rows(result):
    return [(f.line, f.code, f.fix.safety.value if f.fix else "none") for f in result.findings]


def test_bound_lambda_called_twice_becomes_two_calls_of_the_hoisted_name():
    result = _fix("""
        import jax

        def f(x, k):
            g = jax.jit(lambda v: v * k)
            return g(x) + g(2 * x)

        def run(xs, k):
            return [f(x, k) for x in xs]
        """)
    assert _rows(result) == [(5, "JAX202", "safe")]
    assert "g = " not in result.fixed_source
    assert "_f_lambda_jit(x, k) + _f_lambda_jit(2 * x, k)" in result.fixed_source
    assert "_f_lambda_jit = jax.jit(lambda v, k: v * k)" in result.fixed_source


def test_name_that_escapes_or_is_reused_in_a_loop_is_not_reported():
    result = _fix("""
        import jax

        def returned(k):
            g = jax.jit(lambda v: v * k)
            return g

        def stored(d, k, x):
            g = jax.jit(lambda v: v * k)
            d["g"] = g
            return g(x)

        def in_loop(xs, k):
            g = jax.jit(lambda v: v * k)
            for x in xs:
                yield g(x)

        def two_bindings(x, k):
            g = jax.jit(lambda v: v * k)
            if k:
                g = jax.jit(lambda v: v + k)
            return g(x)
        """)
    assert _rows(result) == []


def test_bound_partial_whose_value_changes_before_the_call_is_manual():
    result = _fix("""
        from functools import partial
        import jax

        def h(v, s):
            return v * s

        def f(x, s):
            g = jax.jit(partial(h, s=s))
            s = s + 1
            return g(x)

        def train(xs, s):
            return [f(x, s) for x in xs]
        """)
    assert _rows(result) == [(9, "JAX202", "manual")]
    assert "`s` changes between the binding and a call" in result.findings[0].message


def test_bound_call_from_a_nested_scope_or_shared_line_is_manual():
    result = _fix("""
        import jax

        def nested(xs, k):
            g = jax.jit(lambda v: v * k)
            return (lambda: g(xs))()

        def shared(x, k):
            g = jax.jit(lambda v: v * k); y = 1
            return g(x) + y

        def train(xs, k):
            return [nested(x, k) + shared(x, k) for x in xs]
        """)
    assert _rows(result) == [(5, "JAX202", "manual"), (9, "JAX202", "manual")]
    assert "nested function" in result.findings[0].message
    assert "shares its line" in result.findings[1].message


def test_method_of_a_new_object_pytree_is_unsafe_plain_class_is_manual():
    code = """
        import equinox as eqx
        import jax

        class P(eqx.Module):
            k: float

            def apply(self, x):
                return x * self.k

        class Q:
            def __init__(self, k):
                self.k = k

            def apply(self, x):
                return x * self.k

        def run(x, ks):
            for k in ks:
                x = jax.jit(P(k).apply)(x)
                x = jax.jit(Q(k).apply)(x)
            return x
        """
    result = _fix(code, unsafe=True)
    assert _rows(result) == [(20, "JAX201", "unsafe"), (21, "JAX201", "manual")]
    assert "_P_apply_jit = jax.jit(P.apply)" in result.fixed_source
    assert "x = _P_apply_jit(P(k), x)" in result.fixed_source
    assert "`Q` is not a pytree" in result.findings[1].message
    assert _fix(code).fixed_source is None  # the unsafe fix needs --unsafe-fixes


def test_method_of_an_object_made_once_is_hoisted_before_the_loop():
    result = _fix("""
        import jax

        def run(m, xs):
            for x in xs:
                g = jax.jit(m.apply)
                x = g(x)
            return x
        """)
    assert _rows(result) == [(6, "JAX201", "safe")]
    assert "    _apply_jit = jax.jit(m.apply)\n    for x in xs:\n        x = _apply_jit(x)\n" in result.fixed_source
