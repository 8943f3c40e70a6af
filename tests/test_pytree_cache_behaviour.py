"""What the pytree-cache fixes do at run time: the cache is used under jit once filled, the
hazards that make the field style unsafe, and the cases reported as manual."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

from codemods.pytree_cache import PytreeCacheCommand
from jaxfix.engine import analyze
from jaxfix.engine.config import Config

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pytree_cache_support import FIXTURES, load_module  # noqa: E402

# the opt-in field style (`cache-style = "field"`); the default is the property style
FIELD = Config(unsafe_fixes=True).with_options(
    "pytree-cache", **{"cache-style": "field", "unproven-pytrees": True}
)

COUNTED = """
import functools

import jax
import jax.numpy as jnp
from flax import struct

CALLS = [0]


class Model(struct.PyTreeNode):
    w: jax.Array

    @functools.cached_property
    def norm(self) -> jax.Array:
        CALLS[0] += 1
        return jnp.sum(jnp.sin(self.w))
"""


UNPROVEN = Config().with_options("pytree-cache", **{"unproven-pytrees": True})


def _fix(source: str, config: Config = FIELD) -> str:
    result = analyze(textwrap.dedent(source), "m.py", config, fix=True)
    assert result.error is None
    assert result.fixed_source is not None
    return result.fixed_source


def _sin_count(fn, *args) -> int:
    return str(jax.make_jaxpr(fn)(*args)).count("sin")


def test_filled_cache_is_used_under_jit():
    """Before: every trace (and every compiled run) computes `norm`. After `with_caches()`: none does."""
    original = load_module(COUNTED, "counted_orig")
    rewritten = load_module(_fix(COUNTED), "counted_new")
    use = lambda m: m.norm * 2.0  # noqa: E731
    w = jnp.array([0.5, -1.0, 2.0])

    # original: eager access caches, but jit gets a fresh instance with an empty __dict__
    m = original.Model(w=w)
    m.norm
    m.norm
    assert original.CALLS[0] == 1
    f = jax.jit(use)
    f(m), f(m), f(original.Model(w=w + 1.0))
    assert original.CALLS[0] == 2  # recomputed in the (one) trace ...
    assert _sin_count(use, m) == 1  # ... and `sin` is in the compiled program: run on every call

    # rewrite, filled once outside jit: the jitted function reads the cached leaf
    r = rewritten.Model(w=w).with_caches()
    assert rewritten.CALLS[0] == 1  # the fill computes once
    g = jax.jit(use)
    out = g(r), g(r), g(rewritten.Model(w=w + 1.0).with_caches())
    assert rewritten.CALLS[0] == 2  # only the second fill; the trace computed nothing
    assert _sin_count(use, r) == 0  # no `sin` left in the jitted program
    assert jnp.allclose(out[0], f(m)) and jnp.allclose(out[2], f(original.Model(w=w + 1.0)))
    # unfilled, the rewrite computes under jit like the original; None vs filled are two traces
    assert _sin_count(use, rewritten.Model(w=w)) == 1
    traces = [0]

    def counted(m):
        traces[0] += 1
        return m.norm * 2.0

    h = jax.jit(counted)
    h(r), h(rewritten.Model(w=w + 1.0).with_caches())
    assert traces[0] == 1
    h(rewritten.Model(w=w)), h(rewritten.Model(w=w + 2.0))
    assert traces[0] == 2


def test_closed_over_instance_no_longer_leaks():
    original = load_module(COUNTED, "leak_orig")
    rewritten = load_module(_fix(COUNTED), "leak_new")
    for mod, leaks in ((original, True), (rewritten, False)):
        c = mod.Model(w=jnp.arange(3.0))
        jax.jit(lambda x: x * c.norm)(2.0)
        stored = vars(c).get("norm")
        assert isinstance(stored, jax.core.Tracer) is leaks
        if not leaks:
            assert jnp.allclose(c.norm, jnp.sum(jnp.sin(jnp.arange(3.0))))


def test_field_style_hazards_are_real():
    """The reasons the field style is `unsafe` (measured here, named in the fix title)."""
    import flax.serialization as ser

    original = load_module(COUNTED, "haz_orig")
    rewritten = load_module(_fix(COUNTED), "haz_new")
    w = jnp.array([0.5, -1.0, 2.0])
    old, new = original.Model(w=w), rewritten.Model(w=w)
    filled = new.with_caches()
    # 1. tree structure: a new None node, and a leaf once filled
    assert str(jax.tree.structure(old)) != str(jax.tree.structure(new))
    assert len(jax.tree.leaves(new)) == 1 and len(jax.tree.leaves(filled)) == 2
    # 2. checkpoints saved before the rewrite no longer restore (and the other way round)
    with pytest.raises(ValueError, match="Missing field _norm_cache"):
        ser.from_bytes(new, ser.to_bytes(old))
    with pytest.raises(ValueError, match="_norm_cache"):
        ser.from_state_dict(old, ser.to_state_dict(new))
    # 3. a filled cache takes the gradient away from `w`
    grad_empty = jax.grad(lambda m: m.norm)(new)
    grad_filled = jax.grad(lambda m: m.norm)(filled)
    assert jnp.allclose(grad_empty.w, jnp.cos(w))
    assert jnp.allclose(grad_filled.w, 0.0) and float(grad_filled._norm_cache) == 1.0
    # 4. tree_map / optimizer-style updates move the cache too: it goes stale
    moved = jax.tree.map(lambda x: x + 1.0, filled)
    assert not jnp.allclose(moved.norm, jnp.sum(jnp.sin(moved.w)))
    # 5. `replace` keeps a stale cache
    replaced = filled.replace(w=w * 3.0)
    assert not jnp.allclose(replaced.norm, jnp.sum(jnp.sin(w * 3.0)))
    # ...while, unfilled, values and gradients equal the original's
    assert jnp.allclose(new.norm, old.norm)
    assert jnp.allclose(jax.grad(lambda m: m.norm)(old).w, grad_empty.w)


def test_equinox_and_node_class_fill_methods_are_functional():
    for case in ("equinox_unsafe", "node_class_unsafe", "chex_unsafe", "register_dataclass_unsafe"):
        mod = load_module((FIXTURES / f"{case}.out.py").read_text(), case)
        m = mod.Model(w=jnp.array([0.5, -1.0, 2.0]))
        filled = m.with_caches()
        assert m._norm_cache is None and m._total_cache is None, case  # never mutated
        assert filled is not m and jnp.allclose(filled._norm_cache, m.norm), case
        assert jnp.allclose(filled.total, m.total), case
        # the filled cache crosses the jit boundary as a leaf
        assert _sin_count(lambda a: a.norm, filled) == 0, case
        assert _sin_count(lambda a: a.norm, m) == 1, case


def test_subclass_fill_method_chains_to_the_base():
    mod = load_module((FIXTURES / "subclass_chain_unsafe.out.py").read_text(), "chain")
    w = jnp.array([0.5, -1.0, 2.0])
    for name in ("Child", "Deep"):
        m = getattr(mod, name)(w=w)
        filled = m.with_caches()
        assert type(filled) is type(m)
        assert filled._norm_cache is not None and filled._energy_cache is not None, name
        assert jnp.allclose(filled.energy, m.energy) and jnp.allclose(filled.norm, m.norm)
        assert _sin_count(lambda a: a.energy + a.norm, filled) == 0
        assert str(jax.make_jaxpr(lambda a: a.energy + a.norm)(filled)).count("cos") == 0


def _only_finding(source: str, config: Config = FIELD):
    result = analyze(textwrap.dedent(source), "m.py", config)
    assert result.error is None
    return result.findings


@pytest.mark.parametrize(
    "source, reason",
    [
        (
            """
            import functools
            from flax import struct
            class M(struct.PyTreeNode):
                a: float
                @functools.cached_property
                def b(self):
                    return self.a
            def reset(m):
                del m.b
            """,
            "assigns or deletes `.b`",
        ),
        (
            """
            import functools
            import jax
            @jax.tree_util.register_pytree_node_class
            class M:
                def __init__(self, a):
                    self.a = a
                def tree_flatten(self):
                    if self.a is None:
                        return (), None
                    return (self.a,), None
                @classmethod
                def tree_unflatten(cls, aux, children):
                    return cls(*children)
                @functools.cached_property
                def b(self):
                    return self.a
            """,
            "`tree_flatten` does not end in one `return children, aux_data`",
        ),
        (
            """
            import functools
            import jax
            class M:
                def __init__(self, a):
                    self.a = a
                @functools.cached_property
                def b(self):
                    return self.a
            jax.tree_util.register_pytree_node(M, lambda m: ((m.a,), None), lambda _, c: M(*c))
            """,
            "separate flatten/unflatten functions",
        ),
        (
            """
            import functools
            import jax
            from flax import struct
            class M(struct.PyTreeNode):
                a: jax.Array
                @functools.cached_property
                def b(self):
                    return self.a
            class N(M):
                c: jax.Array
            """,
            "subclass `N` adds field `c` without a default",
        ),
    ],
)
def test_manual_cases(source, reason):
    findings = [f for f in _only_finding(source) if f.code == "JAX101"]
    assert findings and all(f.fix.safety.value == "manual" and not f.fix.edits for f in findings)
    assert reason in findings[0].fix.title


def test_manual_for_setter_and_unchanged_text():
    source = """
    import functools
    import equinox as eqx
    class M(eqx.Module):
        a: float
        @functools.cached_property
        def b(self):
            return self.a
        @b.setter
        def b(self, value):
            pass
    """
    (finding,) = _only_finding(source)
    assert finding.fix.safety.value == "manual" and "setter" in finding.fix.title
    assert analyze(textwrap.dedent(source), "m.py", FIELD, fix=True).fixed_source is None


def test_property_style_is_safe_field_style_is_unsafe_and_says_why():
    source = (FIXTURES / "flax_node_unsafe.in.py").read_text()
    field_style = Config().with_options("pytree-cache", **{"cache-style": "field", "unproven-pytrees": True})
    field = {f.code: f.fix for f in analyze(source, "m.py", field_style).findings}
    assert field["JAX101"].safety.value == "unsafe" and "tree structure" in field["JAX101"].title
    assert "gradient" in field["JAX101"].title and "checkpoints" in field["JAX101"].title
    assert field["JAX102"].safety.value == "safe"
    # without --unsafe-fixes only the safe JAX102 fix is applied
    safe_only = analyze(source, "m.py", field_style, fix=True).fixed_source
    assert "lru_cache" not in safe_only and "functools.cached_property" in safe_only
    # the default style is the property style: every fix safe
    assert {f.fix.safety.value for f in analyze(source, "m.py", UNPROVEN).findings} == {"safe"}
    prop = Config().with_options("pytree-cache", **{"cache-style": "property", "unproven-pytrees": True})
    assert {f.fix.safety.value for f in analyze(source, "m.py", prop).findings} == {"safe"}


def test_noqa_and_non_pytree_are_respected():
    source = """
    import functools
    from flax import struct
    class M(struct.PyTreeNode):
        a: float
        @functools.cached_property  # noqa: JAX101
        def b(self):
            return self.a
    class Plain:
        @functools.cached_property
        def b(self):
            return 1
    """
    assert _only_finding(source) == []


def test_libcst_command_gives_the_same_text():
    import libcst as cst
    from libcst.codemod import CodemodContext

    # the evidence JAX101 needs on an equinox module: traced code closing over an instance
    evidence = "\n\ndef solver(model: Model):\n    return jax.jit(lambda x: model.norm * x + model.total)\n"
    source = (FIXTURES / "equinox_unsafe.in.py").read_text() + evidence
    command = PytreeCacheCommand(CodemodContext(filename="equinox_unsafe.in.py"), unsafe_fixes=True)
    out = command.transform_module(cst.parse_module(source)).code
    # the command has no options: it applies the default (property) style, as `jaxfix fix` does
    assert out == analyze(source, "equinox_unsafe.in.py", Config(unsafe_fixes=True), fix=True).fixed_source
    assert "with_caches" not in out and "functools.cached_property" not in out


EDGES = Path(__file__).resolve().parent / "data" / "pytree_cache_edges.py"


def test_edge_shapes_rewrite_cleanly_and_run():
    """Docstring-only class, `this` for self, a class inside a function, a flatten that returns
    names, a clashing `with_caches`, and a one-line body (manual)."""
    source = EDGES.read_text()
    result = analyze(source, str(EDGES), FIELD, fix=True)
    assert result.error is None
    safety = {f.line: f.fix.safety.value for f in result.findings}
    # 28 (`-> float`) is not reported: a cached plain Python number holds no tracer (cached_value)
    assert safety == {11: "unsafe", 20: "manual", 50: "unsafe", 61: "unsafe"}
    fixed = result.fixed_source
    assert analyze(fixed, str(EDGES), FIELD, fix=True).fixed_source is None
    import black

    formatted = black.format_str(fixed, mode=black.Mode())
    # black changes only the one-line body the rule left alone (manual)
    assert formatted.replace("def b(self):\n        return self.a\n", "def b(self): return self.a\n", 1) == fixed
    mod = load_module(fixed, "edges")
    named = mod.Named(jnp.ones(2))
    filled = named.with_caches()
    assert named._b_cache is None and jnp.allclose(filled._b_cache, 2.0)
    assert jnp.allclose(jax.jit(lambda x: x.b)(filled), 2.0)
    assert mod.Empty().with_caches()._b_cache == 1.0
    inner = mod.factory()(a=1.0)
    assert inner.b == 2.0 and not hasattr(inner, "with_caches")  # static float: left as it is
    clash = mod.WithCaches(a=3.0)
    assert clash.with_caches() is clash and clash.with_filled_caches()._b_cache == 3.0


def test_static_valued_properties_get_no_cache_leaf():
    """`-> int` / `-> tuple[...]` stay concrete: a filled leaf would be traced under jit. They are
    not even reported: a cached Python int or tuple holds no tracer (held-out2 labels,
    google-deepmind/gemma `gm/utils/_types.py:83`); the array-valued `total` beside them is."""
    path = Path(__file__).resolve().parent / "data" / "pytree_cache_static.py"
    result = analyze(path.read_text(), str(path), FIELD, fix=True)
    assert result.error is None
    assert [(f.line, f.fix.safety.value) for f in result.findings] == [(15, "unsafe")]
    fixed = result.fixed_source
    assert "_n_cache" not in fixed and "_shape_cache" not in fixed and "_total_cache" in fixed
    assert "@functools.cached_property\n    def n(self) -> int" in fixed  # left as it was
    mod = load_module(fixed, "static")
    filled = mod.M(w=jnp.arange(3.0)).with_caches()
    out = jax.jit(lambda m: jnp.zeros(m.n) + m.total)(filled)  # `n` is still a Python int under jit
    assert out.shape == (3,) and jnp.allclose(out, 3.0)
    assert jax.jit(lambda s: jnp.zeros(s.shape))(mod.S(w=jnp.ones((2, 2)))).shape == (2, 2)


def test_equinox_custom_init_sets_the_cache_field():
    """equinox leaves a defaulted field unset (`Missing`) under a custom `__init__`: the fix sets it."""
    path = Path(__file__).resolve().parent / "data" / "pytree_cache_eqx_init.py"
    result = analyze(path.read_text(), str(path), FIELD, fix=True)
    assert result.error is None
    assert [(f.line, f.fix.safety.value) for f in result.findings] == [(15, "unsafe"), (21, "manual")]
    assert "custom `__init__`" in result.findings[1].fix.title
    mod = load_module(result.fixed_source, "eqx_init")
    layer = mod.L(3)
    filled = layer.with_caches()
    assert layer._b_cache is None and jnp.allclose(filled._b_cache, 3 * jnp.sin(1.0))
    assert _sin_count(lambda m: m.b, filled) == 0
    assert jnp.allclose(jax.jit(lambda m: m.b)(filled), layer.b)
