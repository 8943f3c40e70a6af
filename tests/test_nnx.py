"""Flax NNX and linen, pjit, shard_map and the other spellings of the transform table
(`jaxfix.analysis.transforms`), issue #30: each spelling is found like `jax.jit`; an NNX module's
Python config stays static; the NNX examples are found, fixed and behave like their `jax.jit`
versions (compile counts measured here, on CPU, with the real flax)."""

from __future__ import annotations

import collections
import textwrap
from pathlib import Path

import jax
import jax.monitoring
import jax.numpy as jnp
import numpy as np
import pytest
from fixture_cases import load_as_module

from jaxfix.engine import analyze
from jaxfix.engine.config import Config

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
_COMPILE_EVENT = "/jax/core/compile/backend_compile_duration"
_compiles = collections.Counter()


def _listener(name, duration, **kwargs):
    if name == _COMPILE_EVENT:
        _compiles["all"] += 1


jax.monitoring.register_event_duration_secs_listener(_listener)


def codes(source: str, path: str = "lib.py") -> list[tuple[str, int]]:
    result = analyze(textwrap.dedent(source), path, Config(select=("ALL",)), fix=False)
    assert result.error is None, result.error
    return sorted((f.code, f.line) for f in result.findings)


def fixed(source: str, path: str = "lib.py") -> str:
    result = analyze(source, path, Config(select=("ALL",), unsafe_fixes=True), fix=True)
    assert result.error is None, result.error
    return result.fixed_source if result.fixed_source is not None else source


load = load_as_module


def compiles(fn, *args, **kwargs):
    before = _compiles["all"]
    out = fn(*args, **kwargs)
    jax.block_until_ready(out)
    return out, _compiles["all"] - before


# -- the table: every spelling is a transform ------------------------------------------------------

# annotated: under `eqx.filter_pmap` an unannotated parameter may be given a Python value, which
# stays static (`proven_traced._filtered_unshown`)
TRACED_IF = """
    def f(x: "jax.Array"):
        if x > 0:
            return x
        return -x
"""


@pytest.mark.parametrize(
    "imports, apply",
    [
        ("from flax import nnx", "g = nnx.jit(f)"),
        ("from flax.nnx import jit", "g = jit(f)"),
        ("from flax import nnx", "g = nnx.vmap(f)"),
        ("from flax import nnx", "g = nnx.pmap(f)"),
        ("from jax.experimental import pjit", "g = pjit.pjit(f)"),
        ("from jax.experimental.pjit import pjit", "g = pjit(f)"),
        ("import jax_dataclasses as jdc", "g = jdc.jit(f)"),
        ("import equinox as eqx", "g = eqx.filter_pmap(f)"),
        ("import jax", "g = jax.shard_map(f, mesh=None, in_specs=None, out_specs=None)"),
        ("from jax.experimental.shard_map import shard_map", "g = shard_map(f, mesh=None, in_specs=None, out_specs=None)"),
    ],
)
def test_every_spelling_of_a_transform_traces_its_function(imports, apply):
    source = imports + "\n" + textwrap.dedent(TRACED_IF) + apply + "\n"
    assert codes(source) == [("JAX301", 4)], source


@pytest.mark.parametrize(
    "call",
    [
        "nnx.fori_loop(0, 3, body, x)",
        "nnx.scan(body, length=3)(0, x)",
        "nnx.while_loop(lambda c: c[0] < 3, body, (0, x))",
    ],
)
def test_nnx_loop_bodies_are_traced(call):
    source = f"""
        from flax import nnx

        def body(i, c):
            if i == 0:
                return c
            return c + i

        def run(x):
            return {call}
        """
    assert ("JAX301", 5) in codes(source)


def test_nnx_cond_branches_are_traced():
    source = """
        from flax import nnx

        def yes(x):
            if x > 1:
                return x
            return -x

        def run(p, x):
            return nnx.cond(p, yes, lambda x: x, x)
        """
    assert codes(source) == [("JAX301", 5)]


@pytest.mark.parametrize(
    "call",
    [
        "jax.pure_callback(host, jax.ShapeDtypeStruct(x.shape, x.dtype), x)",
        "io_callback(host, jax.ShapeDtypeStruct(x.shape, x.dtype), x)",
        "jax.debug.callback(host, x)",
    ],
)
def test_host_callbacks_run_on_concrete_values(call):
    """`transforms.HOST_CALLBACKS`: the callback runs on the host with NumPy values (measured: it
    sees `ArrayImpl`), so its `if` is fine even when it is defined inside the jitted function."""
    source = f"""
        import jax
        import numpy as np
        from jax.experimental import io_callback

        @jax.jit
        def f(x):
            def host(v):
                if v > 0:
                    return np.asarray(v)
                return -np.asarray(v)
            return {call}
        """
    assert codes(source) == []
    assert ("JAX301", 9) in codes(source.replace("return " + call, "return host(x)"))


def test_a_custom_jvp_body_is_traced_where_it_is_called_under_jit():
    """Measured: called eagerly a `jax.custom_jvp` function sees concrete arrays, under `jit`
    tracers; so its body is reported through the jitted caller, not on its own."""
    body = textwrap.dedent(
        """
        import jax

        @jax.custom_jvp
        def f(x):
            if x > 0:
                return x
            return -x
        """
    )
    assert codes(body) == []
    assert codes(body + "\n@jax.jit\ndef g(x):\n    return f(x)\n") == [("JAX301", 6)]


# -- NNX module attributes: Python config is static, Variables are traced -------------------------


def test_nnx_module_config_is_static_and_its_variables_are_traced():
    """google/flax@v0.12.8:flax/nnx/nn/linear.py `Linear`: `self.use_bias = use_bias` and
    `self.in_features` are plain attributes (measured under nnx.jit: an int attribute arrives as the
    int), `self.kernel = nnx.Param(...)` a Variable (arrives as a tracer)."""
    source = """
        import jax.numpy as jnp
        from flax import nnx

        class Linear(nnx.Module):
            def __init__(self, in_features: int, out_features: int, use_bias: bool = True, *, rngs: nnx.Rngs):
                self.kernel = nnx.Param(jnp.zeros((in_features, out_features)))
                self.bias: nnx.Param | None
                if use_bias:
                    self.bias = nnx.Param(jnp.zeros((out_features,)))
                else:
                    self.bias = nnx.data(None)
                self.in_features = in_features
                self.use_bias = use_bias
                self.count = nnx.Variable(jnp.zeros(()))

            def __call__(self, x):
                y = x @ self.kernel[...]
                if self.use_bias:
                    y = y + self.bias[...]
                for _ in range(self.in_features):
                    y = y * 1.0
                if self.count.value > 2:
                    y = -y
                return y

        @nnx.jit
        def step(model: Linear, x):  # annotated as Flax's NNX basics write it: the class is shown
            if model.use_bias:
                x = x + 1
            if model.count.value > 0:
                x = -x
            return model(x)
        """
    # the config reads stay silent; the Variable reads are reported, in the method and on the argument
    assert codes(source) == [("JAX301", 23), ("JAX301", 31)]


def test_nnx_config_computed_with_python_builtins_is_static():
    """AI-Hypercomputer/maxdiffusion@7cfb880:src/maxdiffusion/models/wan/autoencoder_kl_wan.py:1072
    (`self.temporal_downsample_factor = 2 ** sum(temperal_downsample)` in `__init__`, a chunk
    count computed from it under `@nnx.jit`; the early return it guards became a safe `lax.cond`
    with branches of different shapes). A `jnp.sum` of the same argument is data, still reported."""
    source = """
        import jax.numpy as jnp
        from flax import nnx

        class Encoder(nnx.Module):
            def __init__(self, temporal_downsample=(True, False)):
                self.factor = 2 ** sum(temporal_downsample)
                self.any_down = any(temporal_downsample)

            @nnx.jit
            def encode(self, x):
                chunks = x.shape[1] // self.factor
                if chunks <= 1 or not self.any_down:
                    return x
                return x * 2
        """
    assert codes(source) == []
    assert codes(source.replace("2 ** sum(temporal_downsample)", "2 ** jnp.sum(jnp.asarray(temporal_downsample))")) == [
        ("JAX301", 13)
    ]


def test_linen_fields_are_static_config():
    """google/flax@v0.12.8:flax/linen/linear.py `Dense`: `use_bias: bool = True` is a dataclass field
    (hashable config), read as `if self.use_bias:` in `__call__` under `jax.jit(model.apply)`."""
    source = """
        import jax
        import flax.linen as nn

        class Dense(nn.Module):
            features: int
            use_bias: bool = True
            act: object = None

            def __call__(self, x):
                if self.use_bias:
                    x = x + 1
                if self.act:
                    x = self.act(x)
                return x

        @jax.jit
        def step(model: Dense, x):
            if model.act:
                x = x * 2
            if x.sum() > 0:
                x = -x
            return model(x)
        """
    assert codes(source) == [("JAX301", 21)]


# -- the NNX examples: found and fixed like their jax.jit versions ---------------------------------


def _codes_of(path: Path) -> list[str]:
    return sorted(code for code, _ in codes(path.read_text(), str(path)))


@pytest.mark.parametrize(
    "nnx_example, jax_example",
    [("nnx_jit_in_loop.py", "jit_in_loop.py"), ("nnx_traced_branches.py", "traced_branches.py"),
     ("nnx_pytree_cache.py", "pytree_cache.py")],
)
def test_each_nnx_example_is_found_like_its_jax_version(nnx_example, jax_example):
    assert _codes_of(EXAMPLES / nnx_example) == _codes_of(EXAMPLES / jax_example)


def test_the_issues_nnx_training_script_has_its_three_bugs_found():
    """Issue #30: `nnx.jit(partial(loss_fn, ...))` per step, `if loss > 10.0:` in `@nnx.jit`, the
    loop timed without blocking: 0 of 3 found before, the `jax.jit` spelling 3 of 3. Also JAX204
    (NNX only, unsafe fix): the `@nnx.jit` step is called per trip with the same model and
    optimizer, which `nnx.cached_partial` would stop traversing on every call."""
    assert _codes_of(EXAMPLES / "nnx_train.py") == ["JAX201", "JAX204", "JAX301", "JAX501"]


@pytest.mark.parametrize("example", ["nnx_jit_in_loop.py", "nnx_traced_branches.py", "nnx_pytree_cache.py", "nnx_train.py"])
def test_each_nnx_example_is_fixed_and_the_fix_is_stable(example):
    path = EXAMPLES / example
    once = fixed(path.read_text(), str(path))
    assert once != path.read_text()
    assert fixed(once, str(path)) == once
    assert codes(once, str(path)) == []


def test_nnx_jit_in_loop_fix_compiles_once():
    path = EXAMPLES / "nnx_jit_in_loop.py"
    before, after = load(path), load(path, fixed(path.read_text(), str(path)))
    x = jnp.linspace(-1.0, 1.0, 5)
    for name in ("run_partial", "run_lambda"):
        expected, n_before = compiles(getattr(before, name), before.Gain(5), x)
        got, n_after = compiles(getattr(after, name), after.Gain(5), x)
        np.testing.assert_allclose(got, expected, rtol=1e-6)
        assert (n_before, n_after) == (8, 1), name
        _, again = compiles(getattr(after, name), after.Gain(5), x + 1.0)
        assert again == 0, name  # steady state: the hoisted jit is a cache hit


def test_nnx_jit_rewraps_even_a_module_function():
    """Why `nnx.jit(f)` per call is reported even for a module function (`REWRAPPING_JITS`):
    measured here, `jax.jit(f)` four times compiles once, `nnx.jit(f)` four times compiles 4 times."""
    from flax import nnx

    def f(x):
        return jnp.sin(x) * 2.0

    x = jnp.ones(3)
    _, jitted = compiles(lambda: [jax.jit(f)(x) for _ in range(4)])
    _, nnx_jitted = compiles(lambda: [nnx.jit(f)(x) for _ in range(4)])
    assert (jitted, nnx_jitted) == (1, 4)
    source = """
        import jax.numpy as jnp
        from flax import nnx

        def f(x):
            return jnp.sin(x)

        def run(x, n):
            for _ in range(n):
                x = nnx.jit(f)(x)
            return x

        def once(x):
            return nnx.jit(f)(x)

        def each(xs):
            return [once(x) for x in xs]
        """
    assert codes(source) == [("JAX201", 10), ("JAX202", 14)]
    assert codes(source.replace("nnx.jit(f)", "jax.jit(f)").replace("from flax import nnx", "import jax")) == [
        ("JAX203", 10)
    ]


def test_nnx_traced_branches_fix_behaves_like_the_eager_original():
    path = EXAMPLES / "nnx_traced_branches.py"
    before, after = load(path), load(path, fixed(path.read_text(), str(path)))
    for x in (3.0, 1.0, 0.5, -2.0, 100.0):
        model = before.Clip()
        with pytest.raises(jax.errors.TracerBoolConversionError):
            before.soft_clip(model, jnp.float32(x))
        with jax.disable_jit():
            want_clip = before.soft_clip(model, jnp.float32(x))
            want_count = before.count_halvings(model, jnp.float32(x))
        np.testing.assert_allclose(after.soft_clip(after.Clip(), jnp.float32(x)), want_clip, rtol=1e-6)
        assert int(after.count_halvings(after.Clip(), jnp.float32(x))) == int(want_count)


def test_nnx_cached_property_breaks_under_nnx_jit_and_the_property_fix_does_not():
    """The measured facts behind JAX101 on an nnx.Module (docs/frameworks.md)."""
    path = EXAMPLES / "nnx_pytree_cache.py"
    before, after = load(path), load(path, fixed(path.read_text(), str(path)))
    xs = jnp.arange(6.0).reshape(3, 2)
    dist = before.Gaussian(jnp.zeros(2), jnp.array([0.0, -0.5]))
    first = before.total_log_prob(dist, xs)
    assert isinstance(vars(dist)["precision"], jax.core.Tracer)  # the tracer leaked onto the real module
    with pytest.raises(jax.errors.UnexpectedTracerError):
        before.total_log_prob(dist, xs)
    eager = before.Gaussian(jnp.zeros(2), jnp.array([0.0, -0.5]))
    _ = eager.precision  # filled outside jit: an array in a static attribute
    with pytest.raises(ValueError, match="metadata"):
        before.total_log_prob(eager, xs)  # a second instance reaches the function
    alone = load(path)  # a fresh jit cache: one instance, filled eagerly, is accepted and goes stale
    stale = alone.Gaussian(jnp.zeros(2), jnp.array([0.0, -0.5]))
    _ = stale.precision
    np.testing.assert_allclose(alone.total_log_prob(stale, xs), first, rtol=1e-6)
    stale.log_std[...] = jnp.array([0.5, 0.5])  # an update the cached precision does not follow
    fresh = after.Gaussian(jnp.zeros(2), jnp.array([0.5, 0.5]))
    assert not np.allclose(alone.total_log_prob(stale, xs), after.total_log_prob(fresh, xs))
    fixed_dist = after.Gaussian(jnp.zeros(2), jnp.array([0.0, -0.5]))
    np.testing.assert_allclose(after.total_log_prob(fixed_dist, xs), first, rtol=1e-6)
    np.testing.assert_allclose(after.total_log_prob(fixed_dist, xs), first, rtol=1e-6)
    assert "precision" not in vars(fixed_dist)


def test_nnx_training_script_fix_runs_and_compiles_once_per_evaluation():
    path = EXAMPLES / "nnx_train.py"
    before, after = load(path), load(path, fixed(path.read_text(), str(path)))
    with pytest.raises(jax.errors.TracerBoolConversionError):
        before.train(steps=1)
    assert np.isfinite(after.train(steps=3))
    from flax import nnx

    model_b, model_a = before.MLP(4, 1, rngs=nnx.Rngs(0)), after.MLP(4, 1, rngs=nnx.Rngs(0))
    x, y = jnp.ones((8, 4)), jnp.zeros((8, 1))
    want, n_before = compiles(before.evaluate, model_b, x, y)
    got, n_after = compiles(after.evaluate, model_a, x, y)
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-6)
    assert (n_before, n_after) == (5, 1)


# -- regressions the table's new spellings exposed ---------------------------------------------------


def test_a_pjit_of_a_nested_def_does_not_hide_a_method_of_the_same_name():
    """google/brax@0b96d056328d15ea7ebfd3ce07f42be72ec76e40:brax/training/replay_buffers.py:
    `PjitWrapper.__init__` pjits its nested `def init(...)`; `PmapWrapper.init` (a method, which
    no name in `__init__` can reach) still re-wraps a bound method per call. Brax's method uses
    `jax.pmap`, which caches bound methods (measured, see test_jit_placement_regions), so the case
    keeps the shape with `jax.jit`, which does not, and with `sample` for `init` (a jit of an
    initialiser builds state once per model: `state_builders`)."""
    source = """
        import jax
        from jax.experimental import pjit

        class PmapWrapper:
            def __init__(self, buffer):
                self._buffer = buffer

            def sample(self, keys):
                return jax.jit(self._buffer.sample)(keys)

            def sample_all(self, batches):
                return [self.sample(keys) for keys in batches]

        class PjitWrapper:
            def __init__(self, buffer):
                def sample(keys):
                    return jax.vmap(buffer.sample)(keys)

                self._partitioned_sample = pjit.pjit(sample)
        """
    assert codes(source) == [("JAX202", 10)]


# -- a project's own wrapper that returns a transform of its argument is that transform -----------

WRAPPED = """\
import jax
from jax import jit


def maybe_jit(fn, *args, **kwargs):
    return jit(fn, *args, **kwargs)


def maybe_jit_if(fn, use_jit=True):
    return jax.jit(fn) if use_jit else fn


def loop_fn(x):
    if x.sum() > 0:
        return x
    return -x


def run(x, n):
    for i in range(n):
        x = maybe_jit(lambda v: v * (i + 1.0))(x)
    return x


def finish(x):
    return maybe_jit(loop_fn)(x)


def loop2(x):
    if x.sum() > 0:
        return x
    return -x


def run2(x):
    return maybe_jit_if(loop2)(x)
"""


def test_a_project_wrapper_returning_a_transform_is_that_transform():
    """Issue #30's `def maybe_jit(fn, *a, **k): return jit(fn, *a, **k)`, then `maybe_jit(f)(...)`
    per call; a wrapper that may return the function untransformed (`maybe_jit_if`) is not one."""
    assert codes(WRAPPED) == [("JAX201", 21), ("JAX301", 14)]


def test_a_hoist_through_a_project_wrapper_compiles_once():
    before, after = load(Path("wrapped.py"), WRAPPED), load(Path("wrapped.py"), fixed(WRAPPED))
    assert "_run_lambda_jit = maybe_jit(lambda v, i: v * (i + 1.0))" in fixed(WRAPPED)
    x = jnp.linspace(0.5, 1.0, 4)
    want, n_before = compiles(before.run, x, 4)
    got, n_after = compiles(after.run, x, 4)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert (n_before, n_after) == (4, 1)


def test_a_hoist_above_the_wrappers_def_is_left_to_the_user():
    below = WRAPPED.replace('def maybe_jit(fn, *args, **kwargs):\n    return jit(fn, *args, **kwargs)\n\n\n', "")
    below += "\n\ndef maybe_jit(fn, *args, **kwargs):\n    return jit(fn, *args, **kwargs)\n"
    result = analyze(below, "lib.py", Config(select=("ALL",)), fix=False)
    [site] = [f for f in result.findings if f.code == "JAX201"]
    assert site.fix is not None and site.fix.safety.value == "manual" and "defined below" in site.message


# -- framework-traced code: a linen module's __call__ runs under the transform that applies it ------

LINEN_APPLIED = """\
import jax
import flax.linen as nn


class Block(nn.Module):
    features: int
    deterministic: bool = True

    @nn.compact
    def __call__(self, x, train):
        if self.deterministic:
            x = x * 2
        if train:
            x = nn.Dropout(0.1)(x, deterministic=False)
        h = nn.Dense(self.features)(x)
        if h.sum() > 0:
            h = -h
        return h


model = Block(4)


@jax.jit
def step(params, x):
    return model.apply(params, x, True)
"""


def test_a_linen_modules_call_is_traced_where_the_model_is_applied_under_jit():
    """flax's documented pattern (google/flax@v0.12.8 docs_nnx/linen_intro: `model.apply(params, x)`
    inside `@jax.jit`): `__call__` runs on tracers, its config fields (`self.deterministic`) are
    static dataclass fields and `train` is the literal the caller passes; `h` is traced."""
    assert codes(LINEN_APPLIED) == [("JAX301", 16)]
    eager = LINEN_APPLIED.replace("@jax.jit\n", "")
    assert codes(eager) == []  # applied outside any transform: nothing is traced
    other = LINEN_APPLIED.replace("model.apply(params, x, True)", "model.apply(params, x, True, method=Block.setup)")
    assert codes(other) == []  # another method runs: not followed


def test_a_layer_index_carried_by_a_scan_is_traced():
    """The recurring LLM/diffusion bug the issue names: `if layer_idx == 0:` in a body scanned over
    the layers (`lax.scan` and `nnx.scan` alike); the static variant (`range(num_layers)` unrolled
    in Python) stays silent."""
    source = """
        import jax
        import jax.numpy as jnp
        from flax import nnx

        def layer(h, layer_idx):
            if layer_idx == 0:
                h = h * 2
            return h + 1.0, None

        def forward(h, num_layers: int):
            h, _ = jax.lax.scan(layer, h, jnp.arange(num_layers))
            return h

        def forward_nnx(h, num_layers: int):
            h, _ = nnx.scan(layer)(h, jnp.arange(num_layers))
            return h

        @jax.jit
        def unrolled(h):
            for layer_idx in range(4):
                h, _ = layer(h, layer_idx)
            return h
        """
    assert codes(source) == [("JAX301", 7)]
    assert codes(source.replace("nnx.scan(layer)", "list").replace("jax.lax.scan(layer, h, jnp.arange(num_layers))", "(h, 0)")) == []


def test_a_function_called_from_an_nnx_jit_in_another_module_is_traced_there(tmp_path):
    """The issue's "LR schedule called under pmap in another module", with `nnx.jit` (and `jax.pmap`)
    in the caller's module: the call graph reads the same table; a static step stays silent."""
    from jaxfix.batch import BatchOptions, run_paths
    from jaxfix.engine.config import ConfigResolver

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    # (a bare `if step < 100:` there is not reported: only the other module shows `step` traced,
    # and such findings were all wrong on code nobody tuned on; a `print` runs at trace time whatever
    # `step` holds, and is)
    (pkg / "helpers.py").write_text(
        "import jax.numpy as jnp\n\n\ndef schedule(step):\n    print(step)\n"
        "    return jnp.float32(1.0)\n"
    )
    train = "{imp}\n\nfrom pkg.helpers import schedule\n\n\n@{jit}\ndef train_step(model, step):\n    return schedule({arg})\n"

    def found(imp, jit, arg="step"):
        (pkg / "train.py").write_text(train.format(imp=imp, jit=jit, arg=arg))
        outcome = run_paths([str(pkg)], ConfigResolver(), BatchOptions(workers=1))
        return [(Path(f.path).name, f.line, f.code) for f in outcome.findings]

    assert found("from flax import nnx", "nnx.jit") == [("helpers.py", 5, "JAX401")]
    assert found("import jax", "jax.pmap") == [("helpers.py", 5, "JAX401")]
    assert found("from flax import nnx", "nnx.jit", arg="3") == []


def test_a_host_callback_defined_in_traced_code_is_not_traced():
    """FLAIROx/Kinetix@fac744975567154a90e4d378ced1ad3f143d57c0:experiments/ppo.py: the update step
    defines `def callback(metric, ...)` (a `nonlocal last_time` clock, `if` on concrete metrics,
    `wandb.log`) and hands it to `jax.debug.callback`: it runs on the host. Called directly from
    the traced step instead, the same body is traced and reported."""
    source = """
        import time
        import jax
        import jax.numpy as jnp

        def make_train():
            last_time = time.time()

            @jax.jit
            def update(metric):
                def callback(metric):
                    nonlocal last_time
                    last_time = time.time()
                    if metric.sum() > 0:
                        print(metric)

                jax.debug.callback(callback, metric)
                return metric * 2

            return update
        """
    assert codes(source) == []
    called = codes(source.replace("jax.debug.callback(callback, metric)", "callback(metric)"))
    assert ("JAX301", 14) in called


# The training step Flax's NNX basics teach: the model is applied inside a `loss_fn` that
# `nnx.value_and_grad` differentiates within the `@nnx.jit` step. A transform applied in traced
# code runs its function inside that trace, so `__call__` sees traced activations; the `print`
# there was missed (found only when the step called the model itself). `self.depth` stays static.
GRAD_STEP = """
import jax
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, rngs: nnx.Rngs):
        self.linear = nnx.Linear(3, 2, rngs=rngs)
        self.depth = 2

    def __call__(self, x):
        y = self.linear(x)
        print("depth", self.depth)
        print("activations", y)
        return y


def loss_fn(model, x):
    return jnp.sum(model(x) ** 2)


@nnx.jit
def train_step(model, optimizer, x):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x)
    optimizer.update(model, grads)
    return loss
"""


def test_a_model_applied_in_a_loss_differentiated_inside_the_jitted_step_is_traced(tmp_path):
    assert codes(GRAD_STEP) == [("JAX401", 16)]  # the activations; `self.depth` is static config
    assert codes(GRAD_STEP.replace("nnx.value_and_grad(loss_fn)", "jax.value_and_grad(loss_fn)")) == [("JAX401", 16)]
    result = analyze(textwrap.dedent(GRAD_STEP), "train.py", Config(select=("ALL",)), fix=True)
    assert result.error is None and "jax.debug.print" in result.fixed_source
    fixed = load_as_module(tmp_path / "train.py", result.fixed_source)
    model = fixed.MLP(fixed.nnx.Rngs(0))
    optimizer = fixed.nnx.Optimizer(model, fixed.optax.adam(1e-2), wrt=fixed.nnx.Param)
    loss = fixed.train_step(model, optimizer, jnp.ones((4, 3)))
    jax.effects_barrier()
    assert np.isfinite(float(loss))


# google/flax@18f8f311c275d57f46d95e41b15aa97b454754c0:docs_nnx/guides/performance.md (the NNX
# training step the guide times): `model = Model(...)` at module level, passed to an `@nnx.jit`
# step whose nested `loss_fn(model)` runs `model(x)` through `nnx.value_and_grad(loss_fn)(model)`.
# The module's calls show `model` is a `Model`, so `Model.__call__` runs on traced activations:
# a Python `if` on them there fails under the jit (it was missed: only an annotation `model: Model`
# named the class). The guide's own `__call__` has no such `if`: nothing is reported on it.
NNX_GUIDE_STEP = """
from flax import nnx
import jax
import jax.numpy as jnp
import optax

class Model(nnx.Module):
  def __init__(self, din, dmid, dout, rngs: nnx.Rngs):
    self.linear = nnx.Linear(din, dmid, rngs=rngs)
    self.linear_out = nnx.Linear(dmid, dout, rngs=rngs)
    self.rescale = False

  def __call__(self, x):
    x = nnx.relu(self.linear(x))
    if self.rescale:
      x = x * 0.5
    return self.linear_out(x)

model = Model(2, 64, 3, rngs=nnx.Rngs(0))  # eager initialization
optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)

@nnx.jit  # <== currently slow
def train_step(model, optimizer, x, y):
  def loss_fn(model):
    y_pred = model(x)  # call methods directly
    return ((y_pred - y) ** 2).mean()

  loss, grads = nnx.value_and_grad(loss_fn)(model)
  optimizer.update(model, grads)  # in-place updates

  return loss

def run(steps):
  for _ in range(steps):
    x, y = jnp.ones((32, 2)), jnp.zeros((32, 3))
    loss = train_step(model, optimizer, x, y)
  return loss
"""
NNX_GUIDE_STEP_BUGGY = NNX_GUIDE_STEP.replace(
    "    if self.rescale:\n", "    if x.mean() > 0.5:  # a traced activation\n"
)


def test_a_model_instance_passed_to_the_step_runs_its_call_on_traced_activations(tmp_path):
    # `self.rescale` is static config; JAX204 is the guide's own point (the step is "currently slow")
    assert codes(NNX_GUIDE_STEP) == [("JAX204", 36)]
    assert codes(NNX_GUIDE_STEP_BUGGY) == [("JAX204", 36), ("JAX301", 15)]
    original = load_as_module(tmp_path / "buggy.py", textwrap.dedent(NNX_GUIDE_STEP_BUGGY))
    with pytest.raises(jax.errors.TracerBoolConversionError):
        original.run(1)
    result = analyze(textwrap.dedent(NNX_GUIDE_STEP_BUGGY), "fixed.py", Config(select=("ALL",)), fix=True)
    assert result.error is None and "if x.mean()" not in result.fixed_source
    fixed = load_as_module(tmp_path / "fixed.py", result.fixed_source)
    eager = load_as_module(tmp_path / "eager.py", textwrap.dedent(NNX_GUIDE_STEP_BUGGY).replace("@nnx.jit", ""))
    x = jnp.linspace(-1.0, 1.0, 64).reshape(32, 2)
    for module in (fixed, eager):
        module.model = module.Model(2, 64, 3, rngs=module.nnx.Rngs(0))
    np.testing.assert_allclose(np.asarray(fixed.model(x)), np.asarray(eager.model(x)), rtol=1e-6)
    assert np.isfinite(float(fixed.run(2)))


def test_a_model_whose_loss_function_escapes_is_not_given_a_class():
    # `loss_fn` handed to a helper the file does not show: which objects reach `model` is not
    # known, so `model(x)` names no `__call__` and the `if` there is not reported
    escaped = NNX_GUIDE_STEP_BUGGY.replace(
        "loss, grads = nnx.value_and_grad(loss_fn)(model)", "loss, grads = helper(loss_fn, model)"
    )
    assert [c for c in codes(escaped) if c[0] != "JAX204"] == []


# jinPrelude/minimal-rl-nnx@c5eced1f0c904748009be62deddf0e670b444c5e:a2c.py (a spent blind pool,
# heldout12): a module-level `loss_fn(model, batch)` reaches the `@nnx.jit` step through
# `grad_fn = nnx.value_and_grad(loss_fn, has_aux=True)` and `grad_fn(model, batch)` (the shape of
# Flax's MNIST tutorial, there without the annotation `model: CNN`). The model's `__call__` runs
# under that trace: an `if` on its activations fails there, and was missed (only a call of the
# def by name, or a nested def, was followed). The repository's own `__call__` has no such `if`.
A2C_STEP = """
from flax import nnx
import jax
import jax.numpy as jnp
import optax

class A2C(nnx.Module):
    def __init__(self, *, rngs: nnx.Rngs):
        self.fc1 = nnx.Linear(8, 16, rngs=rngs)
        self.fc_pi = nnx.Linear(16, 4, rngs=rngs)
        self.fc_v = nnx.Linear(16, 1, rngs=rngs)

    def __call__(self, x):
        x = nnx.relu(self.fc1(x))
        return self.fc_pi(x), self.fc_v(x)

def loss_fn(model, batch):
    obs, returns = batch
    logits, value = model(obs)
    critic_loss = optax.huber_loss(value, returns).mean()
    return critic_loss + 0.0 * logits.mean(), critic_loss

@nnx.jit
def update_a2c(model, optimizer, batch):
    grad_fn = nnx.value_and_grad(loss_fn, has_aux=True)
    (loss, critic_loss), grad = grad_fn(model, batch)
    optimizer.update(model, grad)
    return loss

def main():
    model = A2C(rngs=nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)
    batch = (jnp.linspace(-1.0, 1.0, 32).reshape(4, 8), jnp.ones((4, 1)))
    return update_a2c(model, optimizer, batch)
"""
A2C_STEP_BUGGY = A2C_STEP.replace(
    "        x = nnx.relu(self.fc1(x))\n",
    "        x = nnx.relu(self.fc1(x))\n        if x.mean() > 0.5:  # a traced activation\n            x = x * 0.5\n",
)
# the same loss called through the transform directly (`nnx.value_and_grad(loss_fn)(model, batch)`)
A2C_STEP_INLINE_BUGGY = A2C_STEP_BUGGY.replace(
    "    grad_fn = nnx.value_and_grad(loss_fn, has_aux=True)\n    (loss, critic_loss), grad = grad_fn(model, batch)\n",
    "    (loss, critic_loss), grad = nnx.value_and_grad(loss_fn, has_aux=True)(model, batch)\n",
)


@pytest.mark.parametrize("buggy", [A2C_STEP_BUGGY, A2C_STEP_INLINE_BUGGY], ids=["bound-grad-fn", "inline"])
def test_a_module_level_loss_runs_the_model_call_under_the_step_trace(tmp_path, buggy):
    assert [c for c in codes(A2C_STEP) if c[0].startswith("JAX3")] == []
    assert [c for c in codes(buggy) if c[0].startswith("JAX3")] == [("JAX301", 15)]
    original = load_as_module(tmp_path / "buggy.py", textwrap.dedent(buggy))
    with pytest.raises(jax.errors.TracerBoolConversionError):
        original.main()
    result = analyze(textwrap.dedent(buggy), "fixed.py", Config(select=("JAX3",)), fix=True)
    assert result.error is None and "if x.mean()" not in result.fixed_source
    fixed = load_as_module(tmp_path / "fixed.py", result.fixed_source)
    eager = load_as_module(tmp_path / "eager.py", textwrap.dedent(buggy).replace("@nnx.jit", ""))
    np.testing.assert_allclose(float(fixed.main()), float(eager.main()), rtol=1e-6)


# patrick-kidger/equinox@b49966e2ac637daf6c1b9c154a661b31d1edbfb3:docs/all-of-equinox.md (the first
# example): `model = MyModule(key)` is passed to a jitted grad of `loss`, which runs
# `jax.vmap(model)(x)`; afterwards `model` is rebound to a tree_map of it (a class the file cannot
# name). The first call gets the `MyModule`, so its `__call__` runs under the trace on traced rows.
EQX_DOCS = """
import equinox as eqx
import jax

class MyModule(eqx.Module):
    layers: list
    extra_bias: jax.numpy.ndarray

    def __init__(self, key):
        key1, key2, key3 = jax.random.split(key, 3)
        self.layers = [eqx.nn.Linear(2, 8, key=key1),
                       eqx.nn.Linear(8, 8, key=key2),
                       eqx.nn.Linear(8, 2, key=key3)]
        # This is a trainable parameter.
        self.extra_bias = jax.numpy.ones(2)

    def __call__(self, x):
        for layer in self.layers[:-1]:
            x = jax.nn.relu(layer(x))
        return self.layers[-1](x) + self.extra_bias

@jax.jit
@jax.grad
def loss(model, x, y):
    pred_y = jax.vmap(model)(x)
    return jax.numpy.mean((y - pred_y) ** 2)

x_key, y_key, model_key = jax.random.split(jax.random.PRNGKey(0), 3)
x = jax.random.normal(x_key, (100, 2))
y = jax.random.normal(y_key, (100, 2))
model = MyModule(model_key)
grads = loss(model, x, y)
learning_rate = 0.1
model = jax.tree_util.tree_map(lambda m, g: m - learning_rate * g, model, grads)
"""
EQX_DOCS_BUGGY = EQX_DOCS.replace(
    "        return self.layers[-1](x) + self.extra_bias\n",
    "        if x.sum() > 0:  # a traced row\n            x = -x\n        return self.layers[-1](x) + self.extra_bias\n",
)


def test_an_equinox_model_vmapped_in_a_jitted_loss_runs_its_call_on_traced_rows(tmp_path):
    assert codes(EQX_DOCS) == []
    assert codes(EQX_DOCS_BUGGY) == [("JAX301", 20)]
    with pytest.raises(jax.errors.TracerBoolConversionError):
        load_as_module(tmp_path / "buggy.py", textwrap.dedent(EQX_DOCS_BUGGY))
    result = analyze(textwrap.dedent(EQX_DOCS_BUGGY), "fixed.py", Config(select=("ALL",)), fix=True)
    assert result.error is None and "if x.sum()" not in result.fixed_source
    fixed = load_as_module(tmp_path / "fixed.py", result.fixed_source)
    rows = np.asarray(fixed.x)
    expected = []
    for row in rows:  # the original `__call__`, eagerly, row by row
        h = row
        for layer in fixed.model.layers[:-1]:
            h = jax.nn.relu(layer(h))
        h = -h if float(h.sum()) > 0 else h
        expected.append(np.asarray(fixed.model.layers[-1](h) + fixed.model.extra_bias))
    np.testing.assert_allclose(np.asarray(jax.vmap(fixed.model)(fixed.x)), np.stack(expected), rtol=1e-5, atol=1e-6)
