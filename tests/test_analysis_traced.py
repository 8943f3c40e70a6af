"""The jit-context and traced-value analysis on its own: which functions are traced, which names."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest

from jaxfix.analysis.jit_contexts import JitContexts, jit_contexts
from jaxfix.rulebase import RuleContext


def contexts(source: str) -> JitContexts:
    ctx = RuleContext(textwrap.dedent(source), "t.py")
    return ctx.fact(JitContexts, jit_contexts)


def fn(jc: JitContexts, name: str):
    found = [i for i in jc.functions.values() if i.name == name]
    assert len(found) == 1, [i.name for i in jc.functions.values()]
    return found[0]


def traced_names(jc: JitContexts, name: str) -> set[str]:
    info = fn(jc, name)
    assert info.facts is not None, f"{name} is not under a trace"
    return set(info.facts.all_traced)


def test_decorated_jit_traces_every_parameter():
    jc = contexts(
        """
        import jax
        @jax.jit
        def f(x, y):
            return x + y
        """
    )
    info = fn(jc, "f")
    assert info.in_trace and info.entry_traced == {"x", "y"}
    assert info.jit_sites[0].wrapper == "jax.jit"


@pytest.mark.parametrize(
    "decorator",
    [
        "@partial(jax.jit, static_argnames=('n',))",
        "@partial(jax.jit, static_argnums=1)",
        "@functools.partial(jit, static_argnums=(1,))",
        "@P(J, static_argnames='n')",
    ],
)
def test_static_arguments_are_not_traced(decorator):
    jc = contexts(
        f"""
        import functools
        from functools import partial
        from functools import partial as P
        import jax
        from jax import jit
        from jax import jit as J
        {decorator}
        def f(x, n):
            y = x * n
            return y
        """
    )
    info = fn(jc, "f")
    assert info.static_params == {"n"}
    assert traced_names(jc, "f") == {"x", "y"}


def test_jit_call_site_alias_and_statics():
    jc = contexts(
        """
        import jax
        def g(x, n):
            return x
        g_jit = jax.jit(g, static_argnames=["n"])
        h_jit = jax.jit(jax.vmap(g))
        """
    )
    info = fn(jc, "g")
    assert info.in_trace
    assert {s.alias for s in info.jit_sites} == {"g_jit"}
    assert "n" in info.static_params
    assert jc.aliases["g_jit"] is info


def test_static_attributes_and_builtins_are_static():
    jc = contexts(
        """
        import jax
        import jax.numpy as jnp
        @jax.jit
        def f(x, bias):
            n = x.shape[0]
            d = x.ndim
            t = x.dtype
            k = len(x)
            is_none = bias is None
            inst = isinstance(x, tuple)
            m = n * 2 + d
            y = x.sum()
            z = jnp.ones(3)
            w = y if n > 2 else x
            return w
        """
    )
    traced = traced_names(jc, "f")
    assert {"n", "d", "t", "k", "is_none", "inst", "m"}.isdisjoint(traced)
    # any jax operation inside a trace is staged out, even on constants
    assert {"x", "bias", "y", "z", "w"} <= traced


def test_flow_sensitive_reassignment_and_loop_fixpoint():
    jc = contexts(
        """
        import jax
        @jax.jit
        def f(x):
            a = 1
            if_stmt = a > 0
            a = x + 1
            b = 0
            for _ in range(3):
                c = b
                b = x
            return a, b, c
        """
    )
    info = fn(jc, "f")
    facts = info.facts
    body = info.node.body.body
    # before `if_stmt = a > 0`, `a` is still the literal 1
    assert "a" not in facts.env_before(body[1])
    assert "a" in facts.env_before(body[3])
    # the loop body runs again: `c = b` sees the traced b of the previous trip
    assert {"b", "c"} <= facts.all_traced


def test_tuple_assignment_pairs_elements():
    jc = contexts(
        """
        import jax
        @jax.jit
        def f(x):
            n, y = x.shape[0], x * 2
            rows, cols = x.shape
            return n, y
        """
    )
    traced = traced_names(jc, "f")
    assert "y" in traced and not {"n", "rows", "cols"} & traced


def test_lax_bodies_and_lambdas_are_traced():
    jc = contexts(
        """
        from jax import lax
        def outer(x, n):
            def body(i, acc):
                return acc + i
            return lax.fori_loop(0, n, body, x)
        def step(carry, x):
            return carry, x
        def run(xs):
            return lax.scan(step, 0.0, xs)
        def branches(p, x):
            return lax.cond(p, lambda v: v, lambda v: -v, x)
        """
    )
    assert fn(jc, "body").entry_traced == {"i", "acc"}
    assert fn(jc, "step").in_trace
    assert not fn(jc, "outer").in_trace
    lambdas = [i for i in jc.functions.values() if i.name == "<lambda>"]
    assert len(lambdas) == 2 and all(i.in_trace and i.entry_traced == {"v"} for i in lambdas)


def test_interprocedural_helpers_only_get_traced_arguments():
    jc = contexts(
        """
        import jax
        def helper(v, k, mode="a"):
            return v * k
        def unused(v):
            return v
        @jax.jit
        def f(x):
            return helper(x, 3)
        """
    )
    info = fn(jc, "helper")
    assert info.in_trace
    assert info.entry_traced == {"v"}
    assert traced_names(jc, "helper") == {"v"}
    assert not fn(jc, "unused").in_trace


def test_methods_properties_and_call_of_traced_objects():
    jc = contexts(
        """
        import equinox as eqx
        import jax
        class M(eqx.Module):
            w: jax.Array
            @property
            def scale(self):
                return self.w * 2
            def __call__(self, x):
                return self.apply(x) * self.scale
            def apply(self, x):
                return x + self.w
        @eqx.filter_jit
        def run(model, x):
            return model(x)
        """
    )
    assert fn(jc, "__call__").entry_traced == {"self", "x"}
    assert fn(jc, "apply").entry_traced == {"self", "x"}
    assert fn(jc, "scale").in_trace


def test_unpassed_literal_defaults_stay_static_passed_ones_are_traced():
    jc = contexts(
        """
        import jax
        @jax.jit
        def f(x, training=False, scale=1.0):
            return x
        def use(x):
            return f(x, scale=2.0)
        """
    )
    info = fn(jc, "f")
    traced = traced_names(jc, "f")
    assert "training" not in traced  # never passed: the Python default under jit
    assert "scale" in traced  # passed: jit turns it into a tracer


def test_vmap_in_axes_none_is_static_and_grad_alone_is_not_a_trace():
    jc = contexts(
        """
        import jax
        def scale(x, k):
            return x * k
        batched = jax.vmap(scale, in_axes=(0, None))
        @jax.grad
        def loss(x):
            return x ** 2
        """
    )
    assert fn(jc, "scale").entry_traced == {"x"}
    assert not fn(jc, "loss").in_trace
    assert fn(jc, "loss").differentiated


def test_differentiated_detection_through_jit():
    jc = contexts(
        """
        import jax
        def loss(x):
            return x
        d = jax.grad(jax.jit(loss))
        e = jax.value_and_grad(loss)
        """
    )
    info = fn(jc, "loss")
    assert info.differentiated and info.in_trace


def test_nested_functions_see_the_enclosing_trace():
    jc = contexts(
        """
        import jax
        @jax.jit
        def f(x):
            n = 3
            def inner():
                return x + n
            return inner()
        """
    )
    inner = fn(jc, "inner")
    assert inner.in_trace
    facts = inner.facts
    ret = inner.node.body.body[0].body[0].value
    assert isinstance(ret, cst.BinaryOperation)
    assert facts.traced(ret.left) and not facts.traced(ret.right)


def test_static_fields_of_pytree_classes_are_static():
    jc = contexts(
        """
        from typing import Callable
        import equinox as eqx
        import jax
        class M(eqx.Module):
            w: jax.Array
            depth: int
            act: Callable
            mode: str = eqx.field(static=True)
            def __call__(self, x):
                d = self.depth
                a = self.w
                return x
        @jax.jit
        def run(model, x):
            return model(x)
        """
    )
    traced = traced_names(jc, "__call__")
    assert "a" in traced and "d" not in traced


def test_module_functions_are_not_mistaken_for_methods():
    jc = contexts(
        """
        import jax
        import jax.numpy as jnp
        class Table:
            def where(self, c, a, b):
                if c:
                    return a
                return b
        @jax.jit
        def f(x):
            return jnp.where(x > 0, x, 0.0)
        """
    )
    assert not fn(jc, "where").in_trace
