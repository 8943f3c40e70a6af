"""JAX101 on a pytree class (an `nnx.Module`, a `flax.struct.dataclass`, ...) decides from what the cached property returns (issue #29, held-out
labels): a plain Python object is never a tracer, so it is not reported; an array is, with the
safe property fix; a value the file cannot classify is reported with an unsafe fix. Real flax on CPU."""

from __future__ import annotations

import textwrap
from pathlib import Path

import jax
import jax.numpy as jnp
from fixture_cases import load_as_module

from jaxfix.engine import analyze
from jaxfix.engine.config import Config

# Modelled on erfanzar/EasyDeL@090a03b2e0b3606bd38e0e3fcfdc640cd7e6e246:
#   easydel/layers/attention/_flexible.py:827 (`quantizer -> EasyQuantizer`, a plain Python class),
#   easydel/infra/base_module.py:723 (`lossfn_type`, a string) and
#   easydel/modules/stablelm/modeling_stablelm.py:649 (returns None),
# each beside an array-valued twin (`base_module.py:671`, a RoPE table) that is still reported.
SOURCE = '''
from functools import cached_property

import jax
import jax.numpy as jnp
from flax import nnx


class Quantizer:
    def __init__(self, bits):
        self.bits = bits


class Attention(nnx.Module):
    def __init__(self, bits: int, dim: int):
        self.bits = bits
        self.dim = dim
        self.w = nnx.Param(jnp.ones((dim,)))

    @cached_property
    def quantizer(self) -> Quantizer:
        return Quantizer(self.bits)

    @cached_property
    def loss_type(self):
        if self.bits > 4:
            kind = "ForCausalLM"
        else:
            kind = "ForSequenceClassification"
        return kind

    @cached_property
    def warm(self):
        self._seen = True

    def __call__(self, x):
        return x * self.w[...] * self.quantizer.bits


class Rotary(nnx.Module):
    def __init__(self, dim: int):
        self.dim = dim
        self.w = nnx.Param(jnp.ones((dim,)))

    @cached_property
    def frequencies(self):
        return jnp.arange(self.dim, dtype=jnp.float32) / self.dim

    def __call__(self, x):
        return x * self.w[...] + self.frequencies
'''

# The value is a config object's method result: this file cannot tell array from Python object
# (erfanzar/EasyDeL@090a03b2e0b3606bd38e0e3fcfdc640cd7e6e246:easydel/infra/base_module.py:651,
# `self.config.get_basic_causal_mask()`): reported, but the fix is unsafe.
UNSURE = '''
from functools import cached_property

from flax import nnx


class Model(nnx.Module):
    def __init__(self, config):
        self.config = config

    @cached_property
    def causal_mask(self):
        return self.config.get_basic_causal_mask()
'''


UNPROVEN = Config(select=("JAX101",)).with_options("pytree-cache", **{"unproven-pytrees": True})


def _findings(source: str, fix: bool = False):
    result = analyze(textwrap.dedent(source), "model.py", UNPROVEN, fix=fix)
    assert result.error is None, result.error
    return result


def test_python_valued_cached_properties_of_an_nnx_module_are_not_reported():
    result = _findings(SOURCE)
    rows = [(f.line, f.fix.safety.value) for f in result.findings]
    assert rows == [(SOURCE.splitlines().index("    def frequencies(self):"), "safe")]


def test_the_array_valued_twin_is_fixed_and_the_fix_is_stable():
    result = _findings(SOURCE, fix=True)
    fixed = result.fixed_source
    assert "    @property\n    def frequencies(self):" in fixed
    assert "    @cached_property\n    def quantizer(self) -> Quantizer:" in fixed  # untouched
    assert "    @cached_property\n    def loss_type(self):" in fixed
    again = analyze(fixed, "model.py", UNPROVEN, fix=True)
    assert again.findings == [] and again.fixed_source in (None, fixed)


def test_python_valued_caches_hold_no_tracer_and_the_array_one_does():
    """Why the Python values are not reported: read first under `jax.jit` of a closure over the
    module, the quantizer and the string stay Python objects; the array cache stores a tracer."""
    mod = load_as_module(Path("cache_values.py"), SOURCE)
    att = mod.Attention(bits=8, dim=3)
    out = jax.jit(lambda x: att(x) + len(att.loss_type))(jnp.ones(3))
    assert jnp.allclose(out, 8.0 + len("ForCausalLM"))
    assert isinstance(att.__dict__["quantizer"], mod.Quantizer) and att.__dict__["loss_type"] == "ForCausalLM"
    rot = mod.Rotary(dim=3)
    jax.jit(lambda x: rot(x))(jnp.ones(3))
    assert isinstance(rot.__dict__["frequencies"], jax.core.Tracer)  # the reported twin leaks

    fixed = load_as_module(Path("cache_values_fixed.py"), _findings(SOURCE, fix=True).fixed_source)
    rot = fixed.Rotary(dim=3)
    first = jax.jit(lambda x: rot(x))(jnp.ones(3))
    assert "frequencies" not in rot.__dict__ and jnp.allclose(rot(jnp.ones(3)), first)


def test_a_value_the_file_cannot_classify_is_reported_with_an_unsafe_fix():
    result = _findings(UNSURE)
    assert [(f.line, f.fix.safety.value) for f in result.findings] == [(11, "unsafe")]
    assert "does not show whether its value is an array" in result.findings[0].fix.title


# The same decision on a `flax.struct.dataclass` (held-out2 labels): sizes read from shapes with an
# `-> int` annotation, an enum of the checkpoint layout and a bool of dict keys never hold a tracer.
# Modelled on google-deepmind/gemma@7691fd4e7f26c9ec5db38110dddb3addfab4d767: gemma/gm/utils/_types.py:83,88 (`batch_size`,
# `max_num_images`) and gemma/gm/ckpts/_checkpoint.py:107,178 (`type -> _CheckpointType`,
# `has_mm_params -> bool`). The buggy twin, `scale`, caches an array computed from a leaf.
STRUCT = '''
import enum
import functools

import flax.struct
import jax
import jax.numpy as jnp


class Layout(enum.StrEnum):
    NESTED = enum.auto()
    FLAT = enum.auto()


@flax.struct.dataclass
class Input:
    text: jax.Array
    tree: dict = flax.struct.field(pytree_node=False, default_factory=dict)

    @functools.cached_property
    def batch_size(self) -> int:
        return len(self.text)

    @functools.cached_property
    def max_len(self) -> int:
        _, n = self.text.shape
        return n

    @functools.cached_property
    def layout(self) -> Layout:
        return Layout.FLAT if "/" in "".join(self.tree) else Layout.NESTED

    @functools.cached_property
    def has_vision(self) -> bool:
        return "vision_encoder" in self.tree

    @functools.cached_property
    def scale(self):
        return jnp.max(jnp.abs(self.text))
'''


def test_python_valued_cached_properties_of_a_struct_dataclass_are_not_reported():
    result = _findings(STRUCT)
    rows = [(f.line, f.fix.safety.value) for f in result.findings]
    assert rows == [(STRUCT.splitlines().index("    def scale(self):"), "safe")]


def test_struct_dataclass_python_caches_hold_no_tracer_and_the_array_one_does():
    """Read first under `jax.jit` of a closure over the instance: the ints, the enum and the bool
    stay Python values; the array cache stores a tracer (the reported twin)."""
    mod = load_as_module(Path("struct_cache_values.py"), STRUCT)
    inp = mod.Input(text=jnp.ones((2, 3)), tree={"vision_encoder": 1})
    jax.jit(lambda x: x * inp.batch_size * inp.max_len + inp.has_vision + len(inp.layout) + inp.scale)(1.0)
    assert inp.__dict__["batch_size"] == 2 and inp.__dict__["max_len"] == 3
    assert inp.__dict__["layout"] is mod.Layout.NESTED and inp.__dict__["has_vision"] is True
    assert isinstance(inp.__dict__["scale"], jax.core.Tracer)


# Arithmetic on the class's array-annotated fields is an array (benchmarks/realworld
# `pytree/eqx_module_cached_property_flag.py`, `periapsis = self.a * (1 - self.e)` with
# `a: jax.Array`): the property fix stays safe. The same arithmetic on an `int` field is not
# shown to be an array: reported with the fix unsafe.
FIELDS = '''
from functools import cached_property

import equinox as eqx
import jax


class Orbit(eqx.Module):
    a: jax.Array
    e: jax.Array
    n: int

    @cached_property
    def periapsis(self):
        return self.a * (1 - self.e)

    @cached_property
    def doubled(self):
        return self.n * 2
'''


def test_arithmetic_on_array_fields_is_an_array_and_on_other_fields_unknown():
    result = _findings(FIELDS)
    lines = FIELDS.splitlines()
    rows = [(f.line, f.fix.safety.value) for f in result.findings]
    assert rows == [(lines.index("    def periapsis(self):"), "unsafe"), (lines.index("    def doubled(self):"), "unsafe")]
    assert "`doubled`: this file does not show" in result.findings[0].fix.title
    alone = FIELDS.split("    @cached_property\n    def doubled")[0]
    assert [f.fix.safety.value for f in _findings(alone).findings] == ["safe"]
