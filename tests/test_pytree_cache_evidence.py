"""JAX101 on a pytree that is not an NNX graph object needs evidence that a persistent instance is
read under a trace: traced code closing over an instance bound outside any trace.

Ten spent pools: 0 real of 45 JAX101 findings on such pytrees (google-deepmind/simply,
mlprt/feedbax, google-deepmind/gemma), every real one on an `nnx.Module`. Passed to `jit` (as an
argument, `self` of a filtered method), the instance is rebuilt from its leaves inside the trace
and the cache dies with that copy; closed over, the caller's own object keeps the tracer (the
measurement below)."""

from __future__ import annotations

import textwrap

import jax.numpy as jnp
import pytest
from fixture_cases import analyze_in_project

from jaxfix.engine import analyze
from jaxfix.engine.config import Config

# Trimmed from google-deepmind/simply@e14c06121fd9c5967051f0956fb4a84ad84a551c:simply/utils/common.py:321-340
# (heldout5 labels: 7 findings in this class, all wrong): a registered dataclass whose instances
# only reach traced code as arguments.
RAGGED = """
import dataclasses
import functools

import jax
import jax.numpy as jnp


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class RaggedArray:
    data: jax.Array
    lens: jax.Array

    @functools.cached_property
    def total_length(self) -> jax.Array:
        return jnp.sum(self.lens)


@jax.jit
def total(ragged: RaggedArray) -> jax.Array:
    return ragged.total_length
"""

# The buggy twin: the jitted function closes over an instance built outside the trace.
CLOSED_OVER = (
    RAGGED
    + """

def totaller(ragged: RaggedArray):
    return jax.jit(lambda scale: scale * ragged.total_length)
"""
)

# Through a method: `dist.log_prob` runs on the closed-over instance and reads the cache there
# (google-deepmind/distrax issue 162 shape).
THROUGH_METHOD = """
import functools

import jax
import jax.numpy as jnp


@jax.tree_util.register_pytree_node_class
class Normal:
    def __init__(self, loc, scale):
        self.loc = loc
        self.scale = scale

    @functools.cached_property
    def log_scale(self):
        return jnp.log(self.scale)

    def log_prob(self, x):
        return -0.5 * ((x - self.loc) / self.scale) ** 2 - self.log_scale

    def tree_flatten(self):
        return (self.loc, self.scale), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


dist = Normal(jnp.zeros(3), jnp.ones(3))
density = jax.jit(lambda x: dist.log_prob(x))
"""

# `self` closed over by a lambda jitted in an untraced method; the same class passed as `self`
# of a jitted method is not evidence.
SELF_IN_METHOD = """
import functools

import equinox as eqx
import jax


class Layer(eqx.Module):
    w: jax.Array

    @functools.cached_property
    def gram(self) -> jax.Array:
        return self.w @ self.w.T

    @functools.cached_property
    def trace(self) -> jax.Array:
        return self.w.trace()

    def solver(self):
        return jax.jit(lambda b: self.gram @ b)

    @eqx.filter_jit
    def scaled(self, x):
        return self.trace * x
"""

# An NNX module is reported without evidence: it persists across `nnx.jit` calls.
NNX = """
from functools import cached_property

import jax.numpy as jnp
from flax import nnx


class Rotary(nnx.Module):
    def __init__(self, dim: int):
        self.dim = dim

    @cached_property
    def frequencies(self):
        return jnp.arange(self.dim) * 2.0
"""


def _jax101(source: str, config: Config | None = None) -> list[str]:
    result = analyze(textwrap.dedent(source), "m.py", config or Config(select=("JAX101",)))
    assert result.error is None, result.error
    return [f.message.split("`")[3] for f in result.findings if f.code == "JAX101"]


def test_an_instance_passed_to_jit_is_not_evidence():
    assert _jax101(RAGGED) == []


def test_an_instance_the_trace_closes_over_is_reported():
    assert _jax101(CLOSED_OVER) == ["total_length"]


def test_a_method_run_on_a_closed_over_instance_reads_its_cache_there():
    assert _jax101(THROUGH_METHOD) == ["log_scale"]


def test_self_closed_over_by_a_jitted_lambda_is_evidence_self_of_a_jitted_method_is_not():
    assert _jax101(SELF_IN_METHOD) == ["gram"]


def test_an_nnx_module_needs_no_evidence():
    assert _jax101(NNX) == ["frequencies"]


def test_unproven_pytrees_reports_every_pytree():
    config = Config(select=("JAX101",)).with_options("pytree-cache", **{"unproven-pytrees": True})
    assert _jax101(RAGGED, config) == ["total_length"]
    assert _jax101(SELF_IN_METHOD, config) == ["gram", "trace"]


def _load(source: str):
    namespace: dict = {}
    exec(compile(textwrap.dedent(source), "<m>", "exec"), namespace)  # noqa: S102
    return namespace


def test_the_evidence_matches_the_measurement():
    """Passed as an argument: no tracer is left on the caller's instance. Closed over: the next
    eager read raises."""
    ns = _load(CLOSED_OVER)
    ragged = ns["RaggedArray"](jnp.ones(4), jnp.array([1, 2]))
    assert int(ns["total"](ragged)) == 3
    assert "total_length" not in ragged.__dict__
    assert float(ns["totaller"](ragged)(2.0)) == 6.0
    with pytest.raises(Exception, match="[Tt]racer"):
        _ = ragged.total_length + 1


# Trimmed from erfanzar/EasyDeL@090a03b2e0b3606bd38e0e3fcfdc640cd7e6e246:easydel/infra/base_module.py:651-689
# (held-out labels): `frequencies` is read by the models' `__call__` in other modules (real: a tracer
# is cached when first read under `nnx.jit` on a persistent merged model); `causal_mask` is read by
# no code of the project (wrong: never first read under a trace).
BASE_MODULE = """
from functools import cached_property

from flax import nnx


class BaseModule(nnx.Module):
    def __init__(self, config):
        self.config = config

    @cached_property
    def causal_mask(self):
        return self.config.get_basic_causal_mask()

    @cached_property
    def frequencies(self):
        return self.config.get_basic_frequencies()
"""

LLAMA = """
from pkg.base import BaseModule


class LlamaModel(BaseModule):
    def __call__(self, x):
        return self.layer(x, frequencies=self.frequencies)
"""


def _project_jax101(tmp_path, files: dict[str, str], checked: str, whole_tree: bool = True) -> list[str]:
    result = analyze_in_project(tmp_path, files, checked, "JAX101", whole_tree)
    return [f.message.split("`")[3] for f in result.findings if f.code == "JAX101"]


def test_a_cached_property_no_code_of_the_project_reads_is_not_reported(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/base.py": BASE_MODULE, "pkg/llama.py": LLAMA}
    assert _project_jax101(tmp_path, files, "pkg/base.py") == ["frequencies"]
    # a file list (pre-commit's changed files) or a file alone cannot tell what reads it
    assert _project_jax101(tmp_path, files, "pkg/base.py", whole_tree=False) == ["causal_mask", "frequencies"]
    assert _jax101(BASE_MODULE) == ["causal_mask", "frequencies"]
    # read through `getattr` with its name: read
    files["pkg/llama.py"] = LLAMA + '\n\ndef mask(model):\n    return getattr(model, "causal_mask")\n'
    assert _project_jax101(tmp_path, files, "pkg/base.py") == ["causal_mask", "frequencies"]
