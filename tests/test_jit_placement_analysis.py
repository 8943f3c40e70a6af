"""The shared analyses behind jit-placement (scopes, static positions) and rule edge cases."""

from __future__ import annotations

import ast
import textwrap

import libcst as cst
from libcst.codemod import CodemodContext

from codemods.jit_placement import JitPlacementCommand
from jaxfix.analysis.names import ImportMap
from jaxfix.analysis.scopes import ScopeIndex
from jaxfix.analysis.static_positions import static_uses
from jaxfix.engine import analyze
from jaxfix.engine.config import Config


def _module(code: str) -> cst.Module:
    return cst.parse_module(textwrap.dedent(code))


def _find(module: cst.Module, kind, pred=lambda n: True):
    found = []

    class _V(cst.CSTVisitor):
        def on_visit(self, node):
            if isinstance(node, kind) and pred(node):
                found.append(node)
            return True

    module.visit(_V())
    return found


def _fix(code: str, unsafe: bool = False):
    return analyze(textwrap.dedent(code), "t.py", Config(select=("JAX2",), unsafe_fixes=unsafe, preview=True), fix=True)


def _rows(result):
    return [(f.code, f.fix.safety.value if f.fix else "none") for f in result.findings]


# -- scopes ------------------------------------------------------------------------------
def test_free_names_of_lambda_and_def_skip_own_and_comprehension_names():
    m = _module("""
        def f(xs, w):
            b = 1
            g = lambda v: [y * w + b for y in v] + [z for z in xs]
            def h(a):
                c = a + b
                return c * w
        """)
    idx = ScopeIndex(m)
    lam = _find(m, cst.Lambda)[0]
    h = _find(m, cst.FunctionDef, lambda n: n.name.value == "h")[0]
    assert idx.free_names(lam) == {"w", "b", "xs"}
    assert idx.free_names(h) == {"b", "w"}
    assert idx.resolve("w", lam.body) is _find(m, cst.FunctionDef, lambda n: n.name.value == "f")[0]


def test_enclosing_loops_follow_python_evaluation_order():
    m = _module("""
        for i in range(call_a()):
            while cond(i):
                x = [g(v) for v in items(i)]
        else:
            once()
        """)
    idx = ScopeIndex(m)
    calls = {c.func.value: c for c in _find(m, cst.Call, lambda c: isinstance(c.func, cst.Name))}
    assert idx.enclosing_loops(calls["call_a"]) == []  # a for loop's iterable runs once
    assert len(idx.enclosing_loops(calls["cond"])) == 2  # a while test runs per iteration
    assert len(idx.enclosing_loops(calls["items"])) == 2  # a comprehension's first iterable: outside it
    assert len(idx.enclosing_loops(calls["g"])) == 3
    assert idx.enclosing_loops(calls["once"]) == []  # for-else runs once


def test_assigned_in_loop_and_class_scope_is_skipped_for_methods():
    m = _module("""
        SCALE = 2
        class C:
            SCALE = 3
            def m(self):
                return SCALE
        def f(n):
            k = 0
            while k < n:
                k += 1
                y = k * 2
        """)
    idx = ScopeIndex(m)
    loop = _find(m, cst.While)[0]
    assert idx.assigned_in(loop) == {"k", "y"}
    ret = _find(m, cst.Return)[0]
    assert idx.resolve("SCALE", ret) is m  # class attributes are not visible in methods


def test_static_uses_ignore_shape_attributes_and_len():
    m = _module("""
        import jax.numpy as jnp
        f = lambda v: jnp.zeros(n)[:k] + v.reshape(r, -1).sum() + (1 if flag else 0) + jnp.ones(a.shape) + len(b) + c
        """)
    lam = _find(m, cst.Lambda)[0]
    uses = static_uses(lam.body, ["n", "k", "r", "flag", "a", "b", "c"], ImportMap.from_module(m).qualify)
    assert set(uses) == {"n", "k", "r", "flag"}


# -- rule edge cases -------------------------------------------------------------------------
def test_any_import_spelling_is_found():
    result = _fix("""
        import jax as jx
        from jax import jit as J
        import equinox as E

        def f(xs):
            a = [jx.jit(lambda v: v + 1)(x) for x in xs]
            b = [J(lambda v: v + 2)(x) for x in xs]
            return a, b, [E.filter_jit(lambda v: v + 3)(x) for x in xs]
        """)
    assert _rows(result) == [("JAX201", "safe")] * 3
    ast.parse(result.fixed_source)
    assert "J(lambda v: v + 2)" in result.fixed_source and "E.filter_jit(lambda v: v + 3)" in result.fixed_source


def test_names_never_collide_with_existing_or_each_other():
    result = _fix("""
        import jax

        _f_lambda_jit = None


        def f(xs):
            a = [jax.jit(lambda v: v + 1)(x) for x in xs]
            return a, [jax.jit(lambda v: v + 2)(x) for x in xs]


        def g(xs, k):
            for i in range(k):
                def body(v):
                    return v * i
                xs = jax.jit(body)(xs)
            return xs


        def h(xs, k):
            for i in range(k):
                def body(v):
                    return v - i
                xs = jax.jit(body)(xs)
            return xs
        """)
    fixed = result.fixed_source
    assert result.error is None and not result.remaining
    assert "_f_lambda_jit_2 = jax.jit(lambda v: v + 1)" in fixed
    assert "_f_lambda_jit_3 = jax.jit(lambda v: v + 2)" in fixed
    namespace = {}
    exec(compile(fixed, "fixed.py", "exec"), namespace)
    assert float(namespace["g"](1.0, 3)) == 1.0 * 0 * 1 * 2  # v * i over i = 0, 1, 2
    assert float(namespace["h"](1.0, 3)) == 1.0 - 0 - 1 - 2


def test_hoist_goes_after_a_function_defined_later():
    result = _fix("""
        from functools import partial

        import jax


        def g(x, n):
            for _ in range(n):
                x = jax.jit(partial(later))(x)
            return x


        def later(v):
            return v + 1
        """)
    fixed = result.fixed_source
    assert fixed.index("def later") < fixed.index("_later_jit = jax.jit(later)") < len(fixed)
    namespace = {}
    exec(compile(fixed, "fixed.py", "exec"), namespace)
    assert int(namespace["g"](0, 3)) == 3


def test_rebound_global_makes_the_fix_unsafe():
    result = _fix("""
        import jax

        SCALE = 1.0


        def set_scale(s):
            global SCALE
            SCALE = s


        def f(xs):
            return [jax.jit(lambda v: v * SCALE)(x) for x in xs]
        """)
    assert _rows(result) == [("JAX201", "unsafe")]
    assert "SCALE" in result.findings[0].message and result.fixed_source is None


def test_partial_with_moving_positional_and_position_options_is_manual():
    result = _fix("""
        from functools import partial

        import jax


        def step(s, v, n):
            return v[:n] * s


        def f(xs, k):
            for s in range(k):
                xs = jax.jit(partial(step, s), static_argnums=(1,))(xs, 2)
            return xs
        """)
    assert _rows(result) == [("JAX201", "manual")]
    assert "shift" in result.findings[0].message


def test_bound_method_per_call_is_manual_and_code_under_trace_is_not_flagged():
    result = _fix("""
        import jax
        from jax import lax


        class M:
            def f(self, x):
                return x * 2

            def step(self, x):
                return jax.jit(self.f)(x)

            def run(self, xs):
                return [self.step(x) for x in xs]


        def body(c, x):
            return c + jax.jit(lambda v: v)(x), None


        def run(xs):
            return lax.scan(body, 0.0, xs)
        """)
    assert _rows(result) == [("JAX202", "manual")]


def test_codemod_command_matches_the_engine():
    source = textwrap.dedent("""
        import jax


        def g(x, n):
            i = 0
            while i < n:
                i = jax.jit(lambda v: v + 1)(i)
            return x + i
        """)
    command = JitPlacementCommand(CodemodContext(filename="g.py"))
    new = command.transform_module(cst.parse_module(source)).code
    assert new == _fix(source).fixed_source
    assert "_g_lambda_jit = jax.jit(lambda v: v + 1)" in new


def test_could_match_is_cheap_but_never_rejects_a_site():
    from codemods.jit_placement.jit_per_call import JitPerCallRule

    rule = JitPerCallRule()
    aliased = "from jax import jit as J\n\ndef f(x):\n    return J(lambda v: v)(x)\n"
    module_level = "import jax\n\nf = jax.jit(abs)\n"
    assert rule.could_match(ast.parse(aliased))
    assert not rule.could_match(ast.parse(module_level))
    # no caller in the file: whether `f` runs twice is unknown (one-shot set-up code, mostly), so
    # the screen's admission is only a parse; with a caller per element it is reported, safe
    assert _rows(_fix(aliased)) == []
    assert _rows(_fix(aliased + "\n\ndef run(xs):\n    return [f(x) for x in xs]\n")) == [("JAX202", "safe")]
    # a method's callers are elsewhere (an engine, a trainer hook): reported, the hoist unsafe,
    # and safe where the module runs it again
    method = "import jax\n\nclass Engine:\n    def step(self, x):\n        return jax.jit(lambda v: v)(x)\n"
    assert _rows(_fix(method)) == [("JAX202", "unsafe")]
    driven = method + "\n    def serve(self, xs):\n        for x in xs:\n            self.step(x)\n"
    assert _rows(_fix(driven)) == [("JAX202", "safe")]
    assert _rows(_fix(method + "\n    def __call__(self, x):\n        return jax.jit(lambda v: v)(x)\n")) == [("JAX202", "unsafe")] * 2


def test_the_familys_config_table_keeps_its_name():
    # one rule per code since the split; `[tool.jaxfix.jit-placement]` in a user's pyproject
    # must still be a known table (it has no options, so any key in it is an error)
    import pytest

    from jaxfix.engine.config import ConfigError, parse_table

    config = parse_table({"select": ["JAX2"], "jit-placement": {}}, "pyproject.toml")
    assert config.select == ("JAX2",)
    with pytest.raises(ConfigError, match="unknown option `hoist` for rule jit-placement"):
        parse_table({"jit-placement": {"hoist": True}}, "pyproject.toml")
