"""Values that stay Python values inside a trace, found wrong on the spent blind pools (issue #29).
Each case cites the code it was reduced from, and the buggy twin beside it is still reported, so a
case cannot pass by the rule going quiet."""

from __future__ import annotations

import textwrap

from jaxfix.engine import analyze
from jaxfix.engine.config import Config


def codes(source: str, path: str = "lib.py", *, preview: bool = False) -> list[tuple[str, int]]:
    result = analyze(textwrap.dedent(source), path, Config(select=("ALL",), preview=preview), fix=False)
    assert result.error is None, result.error
    return sorted((f.code, f.line) for f in result.findings if f.code.startswith("JAX3"))


def test_pallas_cdiv_of_static_shapes_is_a_python_int():
    """jax-ml/jax-llm-examples@8b4b246 gpt_oss/gpt_oss_jax/decode_ragged_dot.py: the grid of a
    Pallas call is `(pl.cdiv(rhs.shape[-1], block_out), ...)`; `cdiv` of two dims is
    `(a + b - 1) // b`, a Python int, so `jnp.arange(grid[-1])` has a static size. `cdiv` of an
    array is `lax.div`: still traced."""
    source = """
        from functools import partial
        import jax
        import jax.numpy as jnp
        from jax.experimental import pallas as pl

        @partial(jax.jit, static_argnames=("block_out",))
        def f(lhs, rhs, sizes, block_out: int = 128):
            block_out = 128 * pl.cdiv(max(128, min(block_out, rhs.shape[-1])), 128)
            grid = (pl.cdiv(rhs.shape[-1], block_out), lhs.shape[0])
            a = jnp.arange(grid[0])
            b = jnp.arange(pl.cdiv(sizes[0], 8))
            return a, b
        """
    assert codes(source) == [("JAX307", 12)]


def test_tpu_info_is_a_python_description_of_the_chip():
    """google-deepmind/simply@e14c061 simply/kernels/gmm_v2.py: `validate_inputs`, inside the
    jitted `gmm_v2`, reads `pltpu.get_tpu_info().get_sublane_tiling(lhs.dtype)` and compares it
    with a size from `.shape` in builtin `min`: both Python ints. A `min` with a traced operand is
    still reported."""
    source = """
        import jax
        import jax.numpy as jnp
        from jax.experimental.pallas import tpu as pltpu

        @jax.jit
        def f(lhs, group_sizes):
            size_m = lhs.shape[0]
            size_lhs_sublane = pltpu.get_tpu_info().get_sublane_tiling(lhs.dtype)
            size_lhs_sublane = min(size_lhs_sublane, size_m)
            total = min(jnp.sum(group_sizes), size_m)
            return jnp.zeros((size_lhs_sublane,)), total
        """
    assert codes(source) == [("JAX301", 11)]


def test_a_local_lambda_named_like_the_enclosing_def_is_not_that_def():
    """probml/rebayes@3b88072 demos/dekf_demos/half_moons_demo.ipynb: inside `def evaluate_sgd(...,
    regularize=False)`, `evaluate_sgd = lambda p: ...; vmap(evaluate_sgd)(sgd_post)` vectorises the
    local lambda, not the outer def, so `regularize` (a Python bool its caller's lambda captures)
    is not made traced. Where the outer def itself is vmapped, it is still reported."""
    source = """
        import jax.numpy as jnp
        from jax import vmap


        def evaluate(lr, m, xs, regularize=False):
            if regularize:
                scale = lr * 2.0
            else:
                scale = m
            evaluate = lambda p: jnp.sum(p * scale)
            return vmap(evaluate)(xs).mean()


        def grid(lrs, ms, xs, regularize=False):
            f = lambda lr, m: evaluate(lr, m, xs, regularize)
            return vmap(vmap(f, (None, 0)), (0, None))(lrs, ms)
        """
    twin = """

        def sweep(lrs, ms, xs, flags):
            return vmap(evaluate, (0, 0, None, 0))(lrs, ms, xs, flags)
        """
    assert codes(source) == []
    assert codes(source + twin) == [("JAX301", 7)]


def test_filter_jit_keyword_options_are_undecidable():
    """jeertmans/DiffeRT@d22adc7 differt/src/differt/geometry/_utils.py: `first_triangle_hit_by_ray`
    is `eqx.filter_jit` with `**kwargs: Any` forwarded to a helper; `if epsilon :=
    kwargs.get("epsilon"):` tests a Python float or None (filter_jit keeps non-arrays static), and
    nothing says a value there is an array. Under `jax.jit` every keyword value is traced."""
    source = """
        import equinox as eqx
        import jax
        import jax.numpy as jnp
        from typing import Any

        @%s
        def hit(origins, **kwargs: Any):
            if epsilon := kwargs.get("epsilon"):
                epsilon = 10.0 * jnp.asarray(epsilon)
            else:
                epsilon = jnp.asarray(1e-6)
            return origins * epsilon
        """
    assert codes(source % "eqx.filter_jit") == []
    assert codes(source % "jax.jit") == [("JAX301", 9)]


def test_a_property_reading_static_properties_is_static():
    """jeertmans/DiffeRT@d22adc7 differt/src/differt/geometry/_mesh.py: `Mesh.shuffle`
    (`eqx.filter_jit`) calls `jnp.arange(self.num_primitives)`, a property returning
    `self.num_quads if self.assume_quads else self.num_triangles`: two properties that read
    `.shape`, chosen by a `bool` field. A property reading one that counts a traced mask is
    still traced."""
    source = """
        import equinox as eqx
        import jax
        import jax.numpy as jnp
        from jaxtyping import Array, Bool, Float


        class Mesh(eqx.Module):
            triangles: Float[Array, "n 3"]
            mask: Bool[Array, " n"]
            assume_quads: bool = eqx.field(default=False)

            @property
            def num_triangles(self) -> int:
                return self.triangles.shape[0]

            @property
            def num_quads(self) -> int:
                return self.triangles.shape[0] // 2

            @property
            def num_active(self):
                return jnp.sum(self.mask)

            @property
            def num_primitives(self) -> int:
                return self.num_quads if self.assume_quads else self.%s

            @eqx.filter_jit
            def shuffle(self, *, key):
                return jax.random.permutation(key, jnp.arange(self.num_primitives))
        """
    assert codes(source % "num_triangles") == []
    assert codes(source % "num_active") == [("JAX307", 31)]


def test_value_and_grad_aux_keeps_the_python_tuple_its_function_returns():
    """ACEsuit/mace-jax@9fe59d9 mace_jax/tools/train.py:859: `(loss, (batch_metrics,
    head_metrics)), grad = jax.value_and_grad(_loss_fn, has_aux=True)(params)` inside a pmapped
    function, then `if head_metrics:`: `_loss_fn` (two defs, one per branch) returns a Python tuple
    of per-head metrics (or `()`), and the aux output is exactly what it returned, so the test is
    its length. An aux that is an array is still reported, with `--preview`: a local the file does
    not show to be an array, tested for truthiness, is the `truthiness` path."""
    source = """
        from functools import partial
        import jax
        import jax.numpy as jnp


        def make(head_indices, metrics_enabled, fn):
            @partial(jax.pmap, axis_name="devices")
            def grad_fn(params, graph):
                if metrics_enabled:

                    def _loss_fn(trainable):
                        loss = jnp.sum(fn(trainable, graph))
                        per_head = [loss * h for h in head_indices]
                        return loss, (loss, %s)

                else:

                    def _loss_fn(trainable):
                        return jnp.sum(fn(trainable, graph)), (None, ())

                (loss, (batch_metrics, head_metrics)), grad = jax.value_and_grad(_loss_fn, has_aux=True)(params)
                if head_metrics:
                    loss = loss + 1
                return loss, grad

            return grad_fn
        """
    assert codes(source % "tuple(per_head)", preview=True) == []
    assert codes(source % "jnp.stack(per_head)", preview=True) == [("JAX301", 23)]


def test_the_counter_of_a_range_loop_is_a_python_int():
    """chrischizinski/pradel-jax@d911295 tests/test_optimization_simple.py:97 (heldout14, wrong):
    `for t in range(first_capture, last_capture)` over traced bounds, then `if t + 1 < n_occasions`.
    `range` raises on a tracer before the first trip, so the bug is the `range` (JAX303, still
    reported); in any trip that runs `t` is an int. A test on an element it indexes stays traced."""
    source = """
        import jax
        import jax.numpy as jnp


        @jax.jit
        def f(ch):
            total = 0.0
            caps = jnp.where(ch == 1, size=4)[0]
            for t in range(caps[0], caps[-1]):
                if t + 1 < 5:
                    total += 1.0
                if ch[t] > 0:
                    total += 2.0
            return total
        """
    assert codes(source) == [("JAX301", 13), ("JAX303", 10)]


def test_past_a_guard_that_raises_on_a_tracer_the_name_is_concrete():
    """DBraun/jraphx@c1055f3 src/jraphx/nn/pool/glob.py:46 (heldout17, wrong): `if isinstance(batch,
    jax.core.Tracer): raise ValueError(...)`, then `int(batch.max())`, which only a concrete batch
    reaches. Without the guard the conversion is the bug."""
    source = """
        import jax


        def num_graphs(batch, size=None):
            if size is not None:
                return int(size)
            if isinstance(batch, jax.core.Tracer):
                raise ValueError("pass size= under jit")
            return int(batch.max()) + 1


        @jax.jit
        def pool(x, batch):
            return x * num_graphs(batch)
        """
    assert codes(source) == []
    guard = '            if isinstance(batch, jax.core.Tracer):\n                raise ValueError("pass size= under jit")\n'
    unguarded = source.replace(guard, "")
    assert unguarded != source and codes(unguarded) == [("JAX304", 8)]


def test_the_truth_of_a_field_is_preview():
    """sepiosky/simba-nnx@10e1ac0 scale_rl/networks/trainer.py:63 (heldout19, wrong): `if
    self.dynamic_scale:` in an `@nnx.jit` method tests a field that holds `None` or a DynamicScale
    object, whose truth is Python's under the trace. The file does not show the field to be an
    array: the `truthiness` path, shown with `--preview` only. The twin that compares a field
    annotated `jax.Array` with a number is still reported by default."""
    source = """
        from typing import Optional

        import flax
        from flax import nnx
        from flax.training import dynamic_scale as dynamic_scale_lib
        import jax


        @flax.struct.dataclass
        class Trainer:
            model: nnx.Module = flax.struct.field(pytree_node=False)
            update_step: jax.Array
            dynamic_scale: Optional[dynamic_scale_lib.DynamicScale] = None

            @nnx.jit
            def apply_gradient(self, loss_fn):
                if %s:
                    raise NotImplementedError("Dynamic scale is not implemented yet.")
                grads, info = nnx.grad(loss_fn, has_aux=True)(self.model)
                return grads, info
        """
    assert codes(source % "self.dynamic_scale") == []
    assert codes(source % "self.dynamic_scale", preview=True) == [("JAX301", 18)]
    assert codes(source % "self.update_step > 0") == [("JAX301", 18)]


def test_the_truth_of_a_local_dict_is_preview():
    """Ricvalp/icil-jax-rlbench@5910eb3 icil_jax_rlbench/train/step.py:293 (heldout20, wrong):
    `task_inner = batch.get("inner", {})`, then `if task_inner:` under vmap/jit tests whether the
    dict of arrays is empty, known at trace time. A local none of whose bindings is a comparison
    is the `truthiness` path; one bound to a comparison (kngwyu/phyjax2d@067d9ed
    src/phyjax2d/impl.py:499, `is_a_best = sep_a > sep_b` under vmap: real) stays default, and
    so does a flag parameter of the jitted function (philipjones77/arbPlusJAX
    src/arbplusjax/hypgeom.py:6923 `if reciprocal:`: real)."""
    source = """
        import jax
        import jax.numpy as jnp


        @jax.jit
        def one_task(params, batch, reciprocal):
            task_inner = batch.get("inner", {})
            is_a_best = params["a"] > params["b"]
            if %s:
                params = jax.tree_util.tree_map(lambda p: p * 2, params)
            return params
        """
    assert codes(source % "task_inner") == []
    assert codes(source % "task_inner", preview=True) == [("JAX301", 10)]
    assert codes(source % "is_a_best") == [("JAX301", 10)]
    assert codes(source % "reciprocal") == [("JAX301", 10)]


def test_a_frozen_settings_dataclass_is_static_under_filter_jit():
    """josephmargaryan/quantbayes@6514993 quantbayes/stochax/energy_based/train.py:130-132
    (heldout21, wrong): `cfg: PCDTrainConfig`, a frozen `@dataclass` of floats and ints (no pytree),
    is a keyword argument of an `@eqx.filter_jit` step, which keeps every non-array argument static:
    `float(cfg.init_scale)` is a Python float. The twin whose settings class is an `eqx.Module`
    holding an array field is traced there: still reported."""
    source = """
        from dataclasses import dataclass
        from typing import Optional

        import equinox as eqx
        import jax
        import jax.numpy as jnp
        import jax.random as jr


        @dataclass(frozen=True)
        class PCDTrainConfig:
            init_scale: float = 1.0
            clamp_min: Optional[float] = 0.0
            sgld_steps: int = 60


        class ArrayConfig(eqx.Module):
            init_scale: jax.Array


        @eqx.filter_jit
        def pcd_train_step(x_real, key, *, cfg: CONFIG):
            x_rand = jr.normal(key, x_real.shape) * float(cfg.init_scale)
            return x_rand + x_real
        """
    assert codes(source.replace("CONFIG", "PCDTrainConfig"), preview=True) == []
    assert codes(source.replace("CONFIG", "ArrayConfig")) == [("JAX304", 24)]


def test_a_field_read_is_preview_unless_declared_an_array():
    """jselvaraaj/JaxVMAS@af44071 jaxvmas/scenario/football.py:619 (heldout22, wrong): `if
    self.precision_strength != 1:` in a method of an `AgentPolicy` pytree under `eqx.filter_jit`,
    whose `precision_strength: float` is a Python float, static there. A condition proven traced
    only through an object's field is the `field` path, shown with `--preview` only and with an
    unsafe fix: on first contact 2 real of 74 labelled JAX301/JAX302 conditions reading a field (of
    `self` or another object), every spent pool. The twin whose field is
    annotated an array (`Float[Array, ""]`) is still reported by default, with its safe fix."""
    source = """
        import equinox as eqx
        import jax
        import jax.numpy as jnp
        from jaxtyping import Array, Float


        class AgentPolicy(eqx.Module):
            speed_strength: float
            precision_strength: STRENGTH

            @eqx.filter_jit
            def go_to(self, key, pos, target_pos):
                diff = jnp.linalg.norm(target_pos - pos, axis=-1)[..., None]
                if self.precision_strength != 1:
                    pos = pos + jax.random.normal(key, pos.shape) * (1 - self.precision_strength) * diff
                return pos
        """
    python_field = source.replace("STRENGTH", "float")
    assert codes(python_field) == []
    assert codes(python_field, preview=True) == [("JAX301", 15)]
    assert codes(source.replace("STRENGTH", 'Float[Array, ""]')) == [("JAX301", 15)]
    result = analyze(textwrap.dedent(python_field), "lib.py", Config(select=("ALL",), preview=True), fix=False)
    assert [f.fix.safety.value for f in result.findings if f.code == "JAX301"] == ["unsafe"]


def test_what_follows_an_array_conversion_is_a_python_value():
    """neutryx-lab/neutryx-core@46ef385 src/neutryx/data/batch_pricing.py:241-357 (heldout23,
    wrong, 15 in the default tier): under the jitted callers, `jnp.unique(...).tolist()` raises first (JAX304,
    real, still reported); had it returned, `type_idx` and `trade_idx` would be Python ints and
    every value read with them Python too. An array's `.tolist()`/`.item()` is a Python value
    (`static_values.CONVERSION_METHODS`), as `int(...)` is. The twin that iterates the traced
    array itself still reports the conversion behind it."""
    source = """
        import jax
        import jax.numpy as jnp


        RATES = [0.01, 0.02, 0.03]


        @jax.jit
        def price(kinds, notionals):
            total = 0.0
            for trade_idx in ITERATED:
                rate = float(RATES[trade_idx])
                total = total + rate * notionals[trade_idx]
            return total
        """
    converted = source.replace("ITERATED", "map(int, jnp.unique(kinds).tolist())")
    assert codes(converted) == [("JAX304", 12)]  # the `.tolist()`
    assert codes(source.replace("ITERATED", "kinds")) == [("JAX304", 13)]  # `float(RATES[trade_idx])`


def test_equinox_and_nnx_transforms_return_traced_values_and_keep_their_aux():
    """What a JAX user writes today (the lead's new-user run, session 31, an equinox training step):
    `l, g = eqx.filter_value_and_grad(loss)(model)` under `eqx.filter_jit`, then `if l > 10:` crashes
    with TracerBoolConversionError as `jax.value_and_grad` does, and was missed (only jax's own
    transforms were known to return traced values; `transforms.TRACED_RESULT_TRANSFORMS`). The same
    with `nnx.value_and_grad` under `nnx.jit`. The aux output a `has_aux=True` loss returns as a
    Python tuple stays one through equinox's transform too (`transforms.AUX_RESULT_PREFIX`)."""
    eqx_step = """
        import equinox as eqx
        import jax.numpy as jnp


        @eqx.filter_jit
        def step(model, x):
            def loss(m):
                return jnp.mean(m(x) ** 2), (jnp.mean(x), ())

            (l, (mean, extras)), g = eqx.filter_value_and_grad(loss, has_aux=True)(model)
            if %s:
                l = l * 0
            return l, g
        """
    assert codes(eqx_step % "l > 10") == [("JAX301", 12)]
    assert codes(eqx_step % "extras", preview=True) == []
    nnx_step = """
        import jax.numpy as jnp
        from flax import nnx


        @nnx.jit
        def step(model, x):
            def loss_fn(m):
                return jnp.mean(m(x) ** 2)

            loss, grads = nnx.value_and_grad(loss_fn)(model)
            if loss > 10:
                loss = loss * 0
            return loss
        """
    assert codes(nnx_step) == [("JAX301", 12)]
