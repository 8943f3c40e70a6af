"""The traced-control-flow family reports what the file proves traced (`jaxfix.analysis.proven_traced`,
issue #29): static facts from the code JAX users write today, each beside its buggy variant,
which is still reported. The negative programs also run under jit, as written, on real jax."""

from __future__ import annotations

import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from fixture_cases import analyze_in_project, load_as_module
from fixture_cases import run_jax3 as run


def lines(result) -> list[tuple[str, int]]:
    return [(f.code, f.line) for f in result.findings]


# jax-ml/jax-llm-examples@8b4b24602e0652100e9835ec6d91fed58bbea472:gemma4/gemma4_jax/model.py:130-337,
# 755-772: a `register_static` Config passed to a jitted `forward` (every field static), and a
# QuantArray whose `out_scaling` is a static field made by a module-level lambda helper with
# `metadata=dict(static=True)`
LLM_CONFIG = """
import dataclasses

import jax
import jax.numpy as jnp

static_field = lambda val=dataclasses.MISSING: dataclasses.field(default=val, metadata=dict(static=True))


@jax.tree_util.register_static
@dataclasses.dataclass
class Config:
    rope_proportion: float | None = None
    head_dim: int = 8
    platform: str = "cpu"


@jax.tree_util.register_dataclass
@dataclasses.dataclass
class QuantArray:
    quant: jax.Array
    out_scaling: bool = static_field(False)


def pos_embeddings(positions, cfg: Config):
    rope_proportion = cfg.rope_proportion or 1.0
    rope_angles = int(rope_proportion * cfg.head_dim // 2)
    return positions[:, None] * jnp.ones(rope_angles)


def which_platform(cfg):
    return cfg.platform


def einsum(x, rhs: QuantArray):
    if rhs.out_scaling:
        return x @ rhs.quant * 2.0
    return x @ rhs.quant


@jax.jit
def forward(positions, cfg: Config, rhs: QuantArray):
    if which_platform(cfg) not in ("cpu", "gpu"):
        raise ValueError("unsupported")
    return einsum(pos_embeddings(positions, cfg), rhs)
"""


def test_a_register_static_config_and_a_lambda_static_field_helper_are_static():
    assert lines(run(LLM_CONFIG)) == []
    mod = load_as_module(Path("llm_config.py"), LLM_CONFIG)
    out = mod.forward(jnp.arange(3.0), mod.Config(rope_proportion=0.5), mod.QuantArray(jnp.ones((2, 2)), True))
    np.testing.assert_allclose(out, np.full((3, 2), 2.0) * np.arange(3.0)[:, None] * 2)


def test_without_the_static_marks_the_same_reads_are_reported():
    # buggy: a Config that is a plain dataclass pytree (its float field a leaf) and a QuantArray
    # field that is a leaf: the same reads now decide on traced values
    buggy = LLM_CONFIG.replace("@jax.tree_util.register_static\n", "@jax.tree_util.register_dataclass\n").replace(
        "out_scaling: bool = static_field(False)", "out_scaling: jax.Array = dataclasses.field(default=False)"
    )
    assert lines(run(buggy, preview=True)) == [
        ("JAX305", 26),  # `cfg.rope_proportion or 1.0`
        ("JAX304", 27),  # `int(rope_proportion * ...)`
        ("JAX301", 36),  # `if rhs.out_scaling:`
        ("JAX301", 43),  # `if which_platform(cfg) ...`: a helper of a traced config
    ]
    # what a helper returns and what only a field not annotated an array makes (`cfg.rope_proportion:
    # float | None`) are preview findings (`traced_control_flow.evidence`), and JAX305 a preview
    # rule: the field annotated `jax.Array` is default
    assert lines(run(buggy, preview=False)) == [("JAX301", 36)]


# google-research/scenic@4a38d475ee89cb821078c0e2bf2065ee030e1535:scenic/projects/polyvit/trainer.py:54,
# 542-555: `jax.pmap(functools.partial(train_step, flax_model=..., ...), static_broadcasted_argnums=(0,
# 1, 2))`: the positions count from the partial's first open parameter (task, dataset, modality)
POLYVIT = """
import functools

import jax
import jax.numpy as jnp


def train_step(task, modality, state, batch, *, scale):
    if modality == "audio":
        return state + scale * batch
    return state - batch


def train(xs, state):
    step = jax.pmap(
        functools.partial(train_step, scale=2.0),
        axis_name="batch",
        static_broadcasted_argnums=(0, 1),
    )
    for x in xs:
        state = step("cls", "audio", state, x)
    return state
"""


def test_pmap_static_broadcasted_argnums_through_a_keyword_partial_are_static():
    assert lines(run(POLYVIT)) == []
    mod = load_as_module(Path("polyvit_like.py"), POLYVIT)
    out = mod.train([jnp.ones((1, 2))], jnp.zeros((1, 2)))
    np.testing.assert_allclose(out, np.full((1, 2), 2.0))
    # buggy: the modality is not among the static arguments: a traced string comparison
    buggy = POLYVIT.replace("static_broadcasted_argnums=(0, 1)", "static_broadcasted_argnums=(0,)")
    assert lines(run(buggy)) == [("JAX301", 9)]


def test_an_attribute_of_an_object_whose_class_the_file_does_not_show_is_not_reported():
    # google/tunix-style train step: `state.config.use_ema` on an unannotated argument can be a
    # leaf or static aux data of a class defined elsewhere; annotated with the file's class, the
    # field is shown to be an array and is reported
    src = textwrap.dedent(
        """
        import flax.struct
        import jax
        import jax.numpy as jnp


        class State(flax.struct.PyTreeNode):
            step: jax.Array
            warmup: int = flax.struct.field(pytree_node=False)


        @jax.jit
        def update(state, x):
            if state.step > 10:
                return x * 2.0
            return x
        """
    )
    assert lines(run(src)) == []
    assert lines(run(src.replace("def update(state, x):", "def update(state: State, x):"))) == [("JAX301", 14)]
    # the static field of the shown class stays silent
    static = src.replace("def update(state, x):", "def update(state: State, x):").replace(
        "if state.step > 10:", "if state.warmup > 10:"
    )
    assert lines(run(static)) == []


def test_a_parameter_annotated_with_a_class_of_another_module_shows_no_field():
    # jax-ml/jax-llm-examples@8b4b24602e0652100e9835ec6d91fed58bbea472:
    # serving/serving_jax/attention_cache_utils.py:453-458: `cache: PagedKVCache` (a class of another
    # module, whose `page_size` is a static field there) read in a jitted function: the file does not
    # show which fields are leaves, so `min(max_seq_len, cache.page_size * ...)` is not reported
    src = """
        import jax
        from serving.cache import PagedKVCache

        @jax.jit
        def get_sequence(cache: PagedKVCache, max_seq_len):
            return min(max_seq_len, cache.page_size * 4)
        """
    assert lines(run(src.replace(", max_seq_len):", "):").replace("max_seq_len, ", "8, "))) == []
    # the same class defined in the file, its field an array: reported
    here = (
        src.replace(
            "from serving.cache import PagedKVCache",
            "import flax.struct\n\n\n        class PagedKVCache(flax.struct.PyTreeNode):\n            page_size: jax.Array",
        )
        .replace(", max_seq_len):", "):")
        .replace("max_seq_len, ", "8, ")
    )
    assert [code for code, _ in lines(run(here))] == ["JAX301"]


# ucl-bug/jwave@2bbf4b4:jwave/signal_processing.py:69-76: the comprehension variable `x` shadows
# the traced parameter `x` and iterates over a static shape: `int(...)` of a dimension
SHADOWING_COMPREHENSION = """
import jax
import jax.numpy as jnp


@jax.jit
def downsample(x):
    Fx = jnp.fft.fftn(x)
    cuts = [int((2 - 1) * x / 2 / 2) for x in Fx.shape]
    return Fx[tuple(slice(cut, -cut or None) for cut in cuts)]
"""


def test_a_comprehension_variable_shadowing_a_traced_parameter_is_its_own_value():
    assert lines(run(SHADOWING_COMPREHENSION)) == []
    module = load_as_module(Path("jwave_downsample.py"), SHADOWING_COMPREHENSION)
    assert module.downsample(jnp.ones((4, 4))).shape == (2, 2)
    # the buggy twin: the comprehension reads the traced parameter itself
    buggy = SHADOWING_COMPREHENSION.replace("for x in Fx.shape", "for d in Fx.shape")
    assert lines(run(buggy)) == [("JAX304", 9)]


# jax-ml/jax-llm-examples@8b4b24602e0652100e9835ec6d91fed58bbea472:serving/serving_jax/
# attention_cache_utils.py:40-52, 200-201: a helper returns `(tree, max_seq_len)` with the length
# read off `.shape[time_axis]`; every parameter taken as traced, the element is still a Python int
TUPLE_WITH_A_SHAPE = """
import jax
import jax.numpy as jnp


def transpose(kv_list, time_axis: int):
    max_seq_len = max([kv.shape[time_axis] for kv in kv_list])
    return tuple(kv_list), max_seq_len


@jax.jit
def insert(kvs, start):
    kvs, max_seq_len = transpose(kvs, time_axis=1)
    return jnp.arange(max_seq_len) + start
"""


def test_an_element_read_off_a_shape_by_a_parameter_index_is_static():
    assert lines(run(TUPLE_WITH_A_SHAPE)) == []
    module = load_as_module(Path("llm_cache_utils.py"), TUPLE_WITH_A_SHAPE)
    assert module.insert([jnp.ones((2, 3)), jnp.ones((2, 5))], 1).shape == (5,)
    # the buggy twin: the second element is an array's value, not its shape
    buggy = TUPLE_WITH_A_SHAPE.replace("kv.shape[time_axis]", "kv.sum()")
    # `max` compares tracers too; the bound is what the helper returns: a preview finding
    assert lines(run(buggy, preview=False)) == [("JAX301", 7)]
    assert [(f.code, f.line, f.preview) for f in run(buggy, preview=True).findings] == [
        ("JAX301", 7, False),
        ("JAX307", 14, True),
    ]


# google-research/big_vision@46b2456:big_vision/trainers/proj/paligemma/train.py:214 and
# google-deepmind/simply model_lib.py:4632: `x or {}` defaults a dict of params: the truth of a
# container is its emptiness, a Python bool under jit
CONTAINER_DEFAULT = """
import jax


@jax.jit
def init(x, partial_params=None):
    params = partial_params or {}
    return x * len(params)
"""


def test_or_with_an_empty_container_default_tests_a_container():
    assert lines(run(CONTAINER_DEFAULT)) == []
    module = load_as_module(Path("paligemma_init.py"), CONTAINER_DEFAULT)
    assert float(module.init(jnp.float32(2.0), {"a": jnp.ones(2), "b": jnp.ones(1)})) == 4.0
    assert float(module.init(jnp.float32(2.0))) == 0.0
    # the buggy twin: a number default says the operand is a number, traced
    buggy = CONTAINER_DEFAULT.replace("partial_params or {}", "partial_params or 1.0").replace("len(params)", "params")
    buggy = buggy.replace("partial_params=None", "partial_params")
    assert lines(run(buggy)) == [("JAX305", 7)]  # a preview finding (JAX305 is a preview rule)


# google-research/long-range-arena@cd31e5c6:lra_benchmarks/image/train.py:142 (heldout6 final
# review): `if jax.tree_leaves(state):` tests whether the tree has leaves; the safe `lax.cond` fix
# it used to get raised TypeError (a list is not a predicate)
LEAF_LIST_TRUTH = """
import jax
import jax.numpy as jnp


@jax.jit
def sync(state, x):
    if jax.tree_util.tree_leaves(state):
        x = x + 1
    leaves = jax.tree.leaves(state)
    if leaves:
        x = x * 2
    return x
"""


def test_the_truth_of_a_leaf_list_is_the_trees_structure():
    assert lines(run(LEAF_LIST_TRUTH)) == []
    module = load_as_module(Path("lra_train.py"), LEAF_LIST_TRUTH)
    assert float(module.sync({"a": jnp.ones(2)}, jnp.float32(1.0))) == 4.0
    assert float(module.sync({}, jnp.float32(1.0))) == 1.0
    # the buggy twin: a value of the leaves, not their list
    buggy = LEAF_LIST_TRUTH.replace("if leaves:", "if jnp.sum(leaves[0]) > 0:")
    assert lines(run(buggy)) == [("JAX301", 11)]


# danielward27/flowjax@3b6a5f5 flowjax/train/losses.py:102-109 (heldout7 final review):
# `eqx.filter_vmap` maps array leaves only, so the Python ints a caller passes from its own
# `batch_size: int` parameters reach the body unbatched, as Python values
FILTER_VMAP_INTS = """
import equinox as eqx
import jax.numpy as jnp
import jax.random as jr


def contrastive_idxs(key, batch_size: int, n_contrastive: int):
    @eqx.filter_vmap
    def _get_idxs(key, idx, batch_size, n_contrastive):
        choices = jnp.delete(jnp.arange(batch_size), idx, assume_unique_indices=True)
        return jr.choice(key, choices, (n_contrastive,), replace=False)

    keys = jr.split(key, batch_size)
    return _get_idxs(keys, jnp.arange(batch_size), batch_size, n_contrastive)
"""


def test_python_ints_a_caller_passes_through_filter_vmap_stay_static():
    assert lines(run(FILTER_VMAP_INTS)) == []
    module = load_as_module(Path("flowjax_losses.py"), FILTER_VMAP_INTS)
    import jax

    assert module.contrastive_idxs(jax.random.PRNGKey(0), 5, 2).shape == (5, 2)
    # the buggy twin: sizes the vmapped function declares arrays (an array would be mapped), from a
    # caller that does not say they are ints; an unannotated parameter of `filter_vmap` may be
    # given a Python value, which it leaves static
    buggy = FILTER_VMAP_INTS.replace(
        "def _get_idxs(key, idx, batch_size, n_contrastive):",
        "def _get_idxs(key, idx, batch_size: jnp.ndarray, n_contrastive: jnp.ndarray):",
    ).replace("batch_size: int, n_contrastive: int", "batch_size, n_contrastive")
    assert buggy != FILTER_VMAP_INTS
    assert [code for code, _ in lines(run(buggy))] == ["JAX307", "JAX307"]


# The research-script shape `train_step = jax.jit(make_train_step(cfg, ...))` (ten hits for that
# one spelling in the code corpus: RL, LM and cognitive-model training scripts): the jit compiles
# the nested def the factory returns, so its parameters are traced however the factory is called.
FACTORY_STEP = """
import jax
import jax.numpy as jnp


def make_train_step(lr, clip):
    def train_step(params, grads):
        if clip:
            grads = jnp.clip(grads, -1.0, 1.0)
        new = params - lr * grads
        if jnp.any(jnp.isnan(new)):
            new = params
        return new

    return train_step


train_step = jax.jit(make_train_step(0.1, clip=True))
"""


def test_the_def_a_factory_returns_is_traced_where_its_result_is_jitted():
    # `clip` is the factory's closed-over Python value; the step's parameters are traced
    assert lines(run(FACTORY_STEP)) == [("JAX301", 11)]
    module = load_as_module(Path("factory_step.py"), FACTORY_STEP)
    try:
        module.train_step(jnp.ones(2), jnp.ones(2))
    except jax.errors.TracerBoolConversionError:
        pass
    else:
        raise AssertionError("the reported `if` runs under jit")
    eager = module.make_train_step(0.1, clip=True)
    np.testing.assert_allclose(eager(jnp.ones(2), jnp.ones(2)), np.full(2, 0.9))
    # called eagerly, the same factory's step is not traced: nothing to report
    assert (
        lines(run(FACTORY_STEP.replace("jax.jit(make_train_step(0.1, clip=True))", "make_train_step(0.1, clip=True)")))
        == []
    )


# AakashKumarNain/TF_JAX_tutorials@ed6f75985f2f3a9e6651b30d6bd3673cc85a0578:
# src/notebooks/jax_tutorials/chapter_4_just_in_time_compilation.ipynb (cells 24 and 26): the cell
# that jits `multiply_n_times` (and shows it fail) names the def above it; a later cell redefines
# it as a plain Python driver around a jitted `multiply` and runs it eagerly (`analysis/def_order`)
REDEFINED = """
# %%
import jax


def multiply_n_times(x, n):
    count = 0
    res = 1
    while count < n:
        res = res * x
        count += 1
    return res


try:
    val = jax.jit(multiply_n_times)(2, 5)
except Exception as ex:
    print(type(ex).__name__)
# %%
multiply_jit = jax.jit(lambda x, i: x * i)


def multiply_n_times(x, n):
    count = 0
    res = 1
    while count < n:
        res = multiply_jit(x, res)
        count += 1
    return res


result = multiply_n_times(2, 5)
"""


def test_a_later_plain_redefinition_is_not_the_jitted_def():
    assert lines(run(REDEFINED)) == []
    assert int(load_as_module(Path("redefined.py"), textwrap.dedent(REDEFINED)).result) == 32


def test_the_jitted_def_alone_is_still_reported():
    single = REDEFINED.split("# %%\nmultiply_jit")[0]
    assert lines(run(single)) == [("JAX302", 9)]


# probml/probml-notebooks@4c0da5e918930e02de5f3e78278c90efe5688b66:notebooks/jax_intro.ipynb
# (cell 141, "Strings"): every call passes `y` a str, which jit rejects before the body runs; the
# branch on `y` never sees a tracer
STRINGS = """
# %%
import jax


def f(x: int, y: str):
    if y == "add":
        return x + 1
    else:
        return x - 1


print(f(42, "add"))
fj = jax.jit(f)
"""


def test_a_parameter_only_ever_given_strings_is_not_proven_traced():
    assert lines(run(STRINGS + 'out = fj(42, "add")\n')) == []


def test_a_parameter_given_a_traceable_value_is_still_reported():
    assert [code for code, _ in lines(run(STRINGS + "out = fj(42, 1)\n"))] == ["JAX301"]


# avitai/artifex@5fce040acb8e3089a999a1f5a63bf4c1503efbb1:src/artifex/generative_models/extensions/
# audio_processing/temporal.py:51-107 (heldout11, after its blind measurement): `jax.vmap(self._m)`
# is given a bound method of an NNX module, so `self` is closed over, not an argument: its config
# ints are Python values under the vmap, and `len(audio)` is a static shape
BOUND_METHOD_VMAP = """
import jax
import jax.numpy as jnp
from flax import nnx


class Framer(nnx.Module):
    def __init__(self, config: dict):
        self.frame_length = config.get("frame_length", 4)
        self.hop_length = config.get("hop_length", 2)

    def energy(self, audio):
        return jax.vmap(self._energy_single)(audio)

    def _energy_single(self, audio):
        n_frames = (len(audio) - self.frame_length) // self.hop_length + 1
        out = []
        for i in range(n_frames):
            start = i * self.hop_length
            if start + self.frame_length <= len(audio):
                out.append(jnp.sum(audio[start : start + self.frame_length] ** 2))
        return jnp.array(out)

    def clipped(self, audio):
        return jax.vmap(self._clip_single)(audio)

    def _clip_single(self, audio):
        if audio.max() > 1.0:
            audio = audio / audio.max()
        return audio
"""


def test_the_receiver_of_a_bound_method_under_jax_vmap_is_closed_over_not_traced():
    # the twin in the same class: a value of the mapped argument, still reported
    assert lines(run(BOUND_METHOD_VMAP)) == [("JAX301", 28)]
    module = load_as_module(Path("artifex_temporal.py"), BOUND_METHOD_VMAP)
    np.testing.assert_allclose(module.Framer({}).energy(jnp.ones((2, 10))), np.full((2, 4), 4.0))
    try:
        module.Framer({}).clipped(jnp.ones((2, 3)))
    except jax.errors.TracerBoolConversionError:
        pass
    else:
        raise AssertionError("the reported `if` runs under vmap")


# MilesCranmer/lagrangian_nns@2fc26cbf584416628e82ab49f7266a6a8bfe932e:experiment_dblpend/data.py:
# 23-55 (odeint stands in for the project's solvers; its `partial(jax.jit, backend='cpu')` is a jit): `get_trajectory` is jitted with
# `use_lagrangian=False`, and its one caller passes `**kwargs` without that key. jit traces only
# the arguments a call gives: a default no call in sight passes is that Python value, and a
# `**kwargs` may or may not pass it (the analysis cannot tell: not reported). The twin passes it.
TRAJECTORY = """
import jax
import jax.numpy as jnp
from jax.experimental.ode import odeint


def analytical_fn(y, t):
    return -y


@jax.jit
def get_trajectory(y0, times, use_lagrangian=False, **kwargs):
    if use_lagrangian:
        y = odeint(analytical_fn, 2 * y0, times, **kwargs)
    else:
        y = odeint(analytical_fn, y0, times, **kwargs)
    return y


def get_dataset(y0, times, **kwargs):
    return get_trajectory(y0, times%s, **kwargs)
"""


def test_a_default_no_call_passes_is_a_python_value():
    assert lines(run(TRAJECTORY % "")) == []
    module = load_as_module(Path("data.py"), textwrap.dedent(TRAJECTORY % ""))
    assert module.get_dataset(jnp.ones(2), jnp.linspace(0.0, 1.0, 3)).shape == (3, 2)


def test_a_default_a_call_passes_is_still_reported():
    assert lines(run(TRAJECTORY % ", use_lagrangian=kwargs.pop('lagrangian')")) == [("JAX301", 13)]


# uwplasma/jax_drb@d1ad39465493d9f96e5de1e913605715f14a3500:src/jaxdrb/linear/ideal_ballooning.py:8-89: a keyword-only
# `Lh: float = float(2 * jnp.pi)` of a function the module jits as `ideal_ballooning_gamma_hat_jit`
# and never calls: `if not (Lh > 0): raise` runs on the Python default
BALLOONING = """
import jax
import jax.numpy as jnp


def gamma_hat(*, shat: float, Lh: float = float(2 * jnp.pi)):
    if not (Lh > 0):
        raise ValueError("Lh must be > 0.")
    return jnp.linspace(-0.5 * Lh, 0.5 * Lh, 9) * shat


gamma_hat_jit = jax.jit(gamma_hat)
"""


def test_a_keyword_only_default_of_a_jitted_function_never_called_is_not_reported():
    assert lines(run(BALLOONING)) == []
    assert lines(run(BALLOONING + "out = gamma_hat_jit(shat=1.0, Lh=3.0)\n")) == [("JAX301", 7)]
    load_as_module(Path("ballooning.py"), textwrap.dedent(BALLOONING)).gamma_hat_jit(shat=1.0)


# ASKabalan/jax-fli@659abc6c src/jax_fli/fields/particles.py:100-200 (heldout15, found after the
# measurement): `self.unit` is an `eqx.field(static=True)` that `AbstractField`, a base class in
# another module, declares; the jitted method compares it in Python. 5 wrong JAX301s, two of them
# with safe `lax.cond` fixes that broke the code.
FIELD_BASE = """
import equinox as eqx
import jax


class AbstractField(eqx.Module):
    array: jax.Array
    unit: int = eqx.field(static=True, default=0)
"""
PARTICLES = """
import jax
import jax.numpy as jnp

from pkg.base import AbstractField


class ParticleField(AbstractField):
    @jax.jit
    def paint(self, weights):
        if self.unit == 3:
            raise ValueError("convert to a grid unit first")
        scale = 2.0 if self.unit == 1 else 1.0
        return jnp.sum(self.array * weights) * scale
"""


def test_an_attribute_only_a_base_class_out_of_sight_declares_is_not_proven_traced(tmp_path):
    def found(particles: str) -> list[tuple[str, int]]:
        files = {"pkg/__init__.py": "", "pkg/base.py": FIELD_BASE, "pkg/particles.py": particles}
        return lines(analyze_in_project(tmp_path, files, "pkg/particles.py", "JAX3", preview=True))

    assert found(PARTICLES) == []
    # the twin: the class itself declares `unit` as an array field, so its value is a traced leaf
    declared = PARTICLES.replace("class ParticleField(AbstractField):\n", "class ParticleField(AbstractField):\n    unit: jax.Array\n\n")
    assert found(declared) == [("JAX301", 13), ("JAX301", 15)]


# uwplasma/JAX-in-Cell@3d43dcc1ba examples/inference_two_stream.py:163-186: the float conversions
# sit under `if not for_jit:`, and the jitted entry points call the helper with `for_jit=True`
# (its eager callers pass False): no trace runs that branch
LITERAL_FLAG = """
import jax
import jax.numpy as jnp


def energy_gamma(out, *, for_jit: bool = False):
    gamma = jnp.polyfit(out[:, 0], jnp.log(out[:, 1]), 1)[0]
    if not for_jit:
        print(f"gamma = {float(gamma):.6e}")
    return gamma


@jax.jit
def gamma_from_vd(out):
    return energy_gamma(out, for_jit=True)


def report(out):
    return energy_gamma(out, for_jit=False)
"""


def test_a_branch_every_traced_call_rules_out_with_a_literal_flag_is_not_traced():
    assert lines(run(LITERAL_FLAG)) == []
    module = load_as_module(Path("two_stream.py"), LITERAL_FLAG)
    out = jnp.stack([jnp.arange(1.0, 5.0), jnp.exp(2.0 * jnp.arange(1.0, 5.0))], axis=1)
    assert abs(float(module.gamma_from_vd(out)) - 2.0) < 1e-3  # runs under jit as written
    # the buggy twins: a traced call that passes False, or a flag that is not a literal
    for twin in (
        LITERAL_FLAG.replace("return energy_gamma(out, for_jit=True)", "return energy_gamma(out, for_jit=False)"),
        LITERAL_FLAG.replace("return energy_gamma(out, for_jit=True)", "return energy_gamma(out)"),
        LITERAL_FLAG.replace("def gamma_from_vd(out):\n    return energy_gamma(out, for_jit=True)",
                             "def gamma_from_vd(out, flag):\n    return energy_gamma(out, for_jit=flag)"),
    ):
        assert twin != LITERAL_FLAG
        assert [code for code, _ in lines(run(twin))] == ["JAX304"], twin


# VLSF/SDC@<heldout15> architectures/SDC_RNN.py:38-42: `M` reaches `__call__` through an
# `eqx.filter_jit` method, which keeps the Python int every caller gives static (checked: `int`
# inside), so `jnp.zeros((..., M + 1))` has a concrete size
FILTER_JIT_INT = """
import equinox as eqx
import jax
import jax.numpy as jnp


class Stepper(eqx.Module):
    scale: jax.Array

    def __call__(self, x, M):
        H = jnp.zeros((x.shape[0], M + 1))
        return H.at[:, -1].set(x * self.scale)

    @eqx.filter_jit
    def call(self, x, M):
        return self.__call__(x, M)
"""


def test_an_unannotated_filter_jit_parameter_is_not_proven_traced():
    assert lines(run(FILTER_JIT_INT)) == []
    module = load_as_module(Path("sdc_rnn.py"), FILTER_JIT_INT)
    model = module.Stepper(jnp.float32(2.0))
    assert module.Stepper.call(model, jnp.ones(3), 4).shape == (3, 5)  # runs as written
    # the twins: declared an array, or used as only an array is (`M.shape`): a traced size
    for twin in (
        FILTER_JIT_INT.replace("def call(self, x, M):", "def call(self, x, M: jax.Array):"),
        FILTER_JIT_INT.replace("return self.__call__(x, M)", "return self.__call__(x, M.shape[0] * M)"),
    ):
        assert twin != FILTER_JIT_INT
        assert [code for code, _ in lines(run(twin))] == ["JAX307"], twin


# leleucas/compiler-paper@<heldout16> cases/jax/tblr2bbox.py:43: the jitted alias is called with
# `*sargs`, a tuple of two arrays, so `normalize_by_wh` keeps its Python default `True`
STAR_ARGS_DEFAULT = """
import jax.numpy as jnp
from jax import jit


def decode(priors, tblr, normalizer=4.0, normalize_by_wh=True):
    out = tblr * normalizer
    if normalize_by_wh:
        out = out * (priors[:, 2:4] - priors[:, 0:2]).sum()
    return out


if __name__ == "__main__":
    priors = jnp.ones((8, 4))
    tblr = jnp.ones((8, 4))
    sargs = (priors, tblr)
    fast = jit(decode)
    assert jnp.allclose(fast(*sargs), decode(*sargs))
"""


def test_a_default_a_starred_tuple_of_known_length_leaves_unpassed_is_not_traced():
    assert lines(run(STAR_ARGS_DEFAULT)) == []
    module = load_as_module(Path("tblr2bbox.py"), STAR_ARGS_DEFAULT)
    assert jax.jit(module.decode)(jnp.ones((8, 4)), jnp.ones((8, 4))).shape == (8, 4)  # runs as written
    # the buggy twin: the tuple passes the flag too (an array), so the `if` is on a tracer
    twin = STAR_ARGS_DEFAULT.replace("sargs = (priors, tblr)", "sargs = (priors, tblr, 4.0, priors)")
    assert [code for code, _ in lines(run(twin))] == ["JAX301"]


# alonfnt/bayex@<heldout16> bayex/optimizer.py:71,146: the scanned suggestion optimiser calls
# `opt.init(params)` on `opt = optax.lbfgs()`; the module's own `Optimizer.init` (an eager method
# with `float(jnp.max(ys[mask]))`) is another object's method of the same name
LIBRARY_OBJECT_METHOD = """
import jax
import jax.numpy as jnp
import optax


def optimize_suggestion(params, fun, max_iter: int = 10):
    opt = optax.sgd(0.1)

    def step(carry, _):
        p, state = carry
        updates, state = opt.update(jax.grad(fun)(p), state, p)
        return (optax.apply_updates(p, updates), state), None

    init_carry = (params, opt.init(params))
    (final, _), _ = jax.lax.scan(step, init_carry, None, length=max_iter)
    return final


class Optimizer:
    def init(self, ys):
        mask = ys > 0
        best = float(jnp.max(jnp.where(mask, ys, -jnp.inf)))
        return best

    def suggest(self, points):
        return jax.vmap(lambda x: optimize_suggestion(x, lambda p: jnp.sum(p**2)))(points)
"""


def test_a_method_of_a_library_object_is_not_the_modules_method_of_that_name():
    assert lines(run(LIBRARY_OBJECT_METHOD)) == []
    module = load_as_module(Path("bayex_optimizer.py"), LIBRARY_OBJECT_METHOD)
    assert module.Optimizer().suggest(jnp.ones((2, 3))).shape == (2, 3)  # runs as written
    # the buggy twin: the object is this module's own optimiser, whose `init` runs on tracers
    twin = LIBRARY_OBJECT_METHOD.replace(
        "    init_carry = (params, opt.init(params))", "    init_carry = (params, Optimizer().init(params))"
    )
    assert twin != LIBRARY_OBJECT_METHOD
    assert "JAX304" in [code for code, _ in lines(run(twin))]


def test_a_nested_def_redefined_in_the_same_body_is_not_the_one_a_transform_took():
    """zjjMaiMai/GumbelAlphaZero@36e9a56 main.py:123 (heldout21, wrong): the jitted training step
    defines `def body(value, traj)` for `lax.scan`, then a second `def body(p, x)` mapped over the
    sample's key paths (`jax.tree.map_with_path`), where `p = keystr(p)` is a string. The scan
    names the first def (the last one above it in the body), not the second: `p == "obs"` is not
    reported. A key-path callback of its own name keeps the scanned body's traced test reported."""
    source = """
        import jax
        import jax.numpy as jnp


        @jax.jit
        def train(traj, sample):
            def body(value, r):
                if value.sum() > 0:
                    value = r + 0.9 * value
                return value, value

            _, value = jax.lax.scan(body, jnp.zeros_like(traj[0]), traj, reverse=True)

            def SECOND(p, x):
                p = jax.tree_util.keystr(p, simple=True, separator="/")
                if p == "obs":
                    return x * 2
                return x

            sample = jax.tree.map_with_path(SECOND, sample)
            return value, sample
        """
    assert lines(run(source.replace("SECOND", "body"))) == []
    assert lines(run(source.replace("SECOND", "augment"))) == [("JAX301", 9)]


_DRIVER = """
    import jax
    import jax.numpy as jnp


    def solve(x, tol):
        residual = jnp.max(jnp.abs(x))
        if residual > tol:
            return x / 2
        return x


    solve_jit = jax.jit(solve)
    """


def test_a_jit_alias_nothing_uses_does_not_make_its_function_traced(tmp_path):
    """sfincs_jax v3_driver.py (heldout26, after its measurement; 20 wrong JAX301/JAX304): the host
    driver is called eagerly by the CLI, the I/O layer and the tests; its one transform is a
    module-level `..._jit = jax.jit(driver)` that nothing calls. The driver's `if` on an array is
    then a plain eager `if`: not reported when the whole project is checked. Its twins are still
    reported: another module calls the alias, the module itself calls it, or the file is checked
    without the rest of the project (who imports the alias is unknown)."""
    cli = "import driver\n\nprint(driver.solve(driver.jnp.ones(3), 0.1))\n"
    quiet = analyze_in_project(tmp_path / "a", {"driver.py": _DRIVER, "cli.py": cli}, "driver.py", "JAX3")
    assert [f.code for f in quiet.findings] == []
    called = cli.replace("driver.solve(", "driver.solve_jit(")
    loud = analyze_in_project(tmp_path / "b", {"driver.py": _DRIVER, "cli.py": called}, "driver.py", "JAX3")
    assert [(f.code, f.line) for f in loud.findings] == [("JAX301", 8)]
    here = _DRIVER + "\n    print(solve_jit(jnp.ones(3), 0.1))\n"
    loud = analyze_in_project(tmp_path / "c", {"driver.py": here, "cli.py": cli}, "driver.py", "JAX3")
    assert [(f.code, f.line) for f in loud.findings] == [("JAX301", 8)]
    alone = analyze_in_project(
        tmp_path / "d", {"driver.py": _DRIVER, "cli.py": cli}, "driver.py", "JAX3", whole_tree=False
    )
    assert [(f.code, f.line) for f in alone.findings] == [("JAX301", 8)]
    # a notebook's magic calls it: jaxfix hands the rules `%timeit solve_jit(x, 0.1)` commented out
    timed = _DRIVER + "\n    # %timeit solve_jit(jnp.ones(3), 0.1)\n"
    loud = analyze_in_project(tmp_path / "e", {"driver.py": timed, "cli.py": cli}, "driver.py", "JAX3")
    assert [(f.code, f.line) for f in loud.findings] == [("JAX301", 8)]
