"""What the traced-control-flow rules show by default and what only with `--preview`
(`codemods/traced_control_flow/evidence.py`, issue #29).

A site traced only as what a project helper or an object's method returns, given a traced
argument, is a preview finding: on the spent blind pools 1 of 23 such findings was real. Every
other proven site stays in the default tier. Each case is a reduced copy of the public code the
blind pools labelled, and runs: the default findings' code fails under its transform, the wrong
preview finding's code works.
"""

from __future__ import annotations

import textwrap

import jax
import jax.numpy as jnp
import pytest

from jaxfix.engine import analyze
from jaxfix.engine.config import Config


def findings(source: str, preview: bool):
    result = analyze(textwrap.dedent(source), "t.py", Config(select=("JAX3",), preview=preview))
    assert result.error is None, result.error
    return result.findings


def load(source: str) -> dict:
    namespace: dict = {}
    exec(compile(textwrap.dedent(source), "<case>", "exec"), namespace)
    return namespace


# probml/probml-notebooks@4c0da5e918930e02de5f3e78278c90efe5688b66:notebooks/jax_intro.ipynb#cell129
# (heldout10, real): a parameter of the jitted function itself
JITTED_PARAMETER = """
from jax import jit


@jit
def f(x):
    if x > 0:
        return x
    else:
        return 2 * x
"""

# mlnomadpy/flaxdocs@1eda4a34032021b2acff2e907bbf6de6762d169b:examples/advanced/bert_fineweb.py:327
# (heldout6, real; `train_step` is `@nnx.jit` there): a jnp reduction in a helper the jitted step calls
CALLED_WITH_A_TRACED_ARGUMENT = """
import jax
import jax.numpy as jnp


def compute_mlm_loss(logits, labels):
    logits_flat = logits.reshape(-1, logits.shape[-1])
    labels_flat = labels.reshape(-1)
    mask = labels_flat != -100
    if jnp.sum(mask) == 0:
        return jnp.array(0.0)
    log_probs = jax.nn.log_softmax(logits_flat, axis=-1)
    picked = jnp.take_along_axis(log_probs, jnp.maximum(labels_flat, 0)[:, None], axis=-1).squeeze(-1)
    return -jnp.sum(picked * mask) / jnp.sum(mask)


@jax.jit
def train_step(logits, labels):
    return compute_mlm_loss(logits, labels)
"""

# LiquidGunay/nano-vllm-jax@a43ef9f9ac4f1be20797a99a0891575f6b6f68f7:nanovllm_jax/model.py:428
# (heldout12, wrong): the helper reads only ndim, shapes and config, a Python bool under jit
HELPER_OF_SHAPES = """
import jax
import jax.numpy as jnp


def _can_use_padded_gemm(x, weight, config=None):
    rows = 8 if config is None else config.rows
    return (
        x.ndim == 3
        and weight.ndim == 2
        and int(x.shape[0]) <= rows
        and int(x.shape[-1]) == int(weight.shape[0])
    )


def projection_dot(x, weight, config=None):
    if _can_use_padded_gemm(x, weight, config):
        return jnp.einsum("btd,do->bto", x, weight)
    return jnp.einsum("btd,do->bto", x, weight) * 1.0


@jax.jit
def block(x, weight):
    return projection_dot(x, weight)
"""

# avitai/opifex@9f906dc96c83debd3c55b77aa3f15c8a9224c4f2:src/opifex/geometry/csg/operations.py:270
# (heldout11, real): the object's method returns `bool(...)` of a batched tracer. The one real
# finding of the path, and the one recall row the default tier no longer shows.
OBJECT_METHOD = """
import jax
import jax.numpy as jnp


class Circle:
    def __init__(self, r):
        self.r = r

    def contains(self, point):
        point = jnp.asarray(point)
        return bool(jnp.sum(point**2) <= self.r**2)


class Difference:
    def __init__(self, shape_b):
        self.shape_b = shape_b

    def mask(self, candidates):
        return jax.vmap(lambda p: not self.shape_b.contains(p))(candidates)
"""


@pytest.mark.parametrize("source", [JITTED_PARAMETER, CALLED_WITH_A_TRACED_ARGUMENT])
def test_a_value_the_file_traces_itself_is_reported_by_default(source):
    [default] = findings(source, preview=False)
    assert default.code == "JAX301" and not default.preview
    assert [(f.line, f.preview) for f in findings(source, preview=True)] == [(default.line, False)]


def test_the_default_findings_are_real():
    with pytest.raises(jax.errors.ConcretizationTypeError):
        load(JITTED_PARAMETER)["f"](3)
    labels = jnp.array([1, -100, 2])
    with pytest.raises(jax.errors.ConcretizationTypeError):
        load(CALLED_WITH_A_TRACED_ARGUMENT)["train_step"](jnp.ones((3, 4)), labels)


def test_a_helper_result_of_shapes_is_only_a_preview_finding_and_the_code_works():
    assert findings(HELPER_OF_SHAPES, preview=False) == []
    [finding] = findings(HELPER_OF_SHAPES, preview=True)
    assert finding.code == "JAX301" and finding.preview and finding.line == 17
    out = load(HELPER_OF_SHAPES)["block"](jnp.ones((2, 1, 4)), jnp.ones((4, 3)))
    assert out.shape == (2, 1, 3)


def test_an_object_method_result_is_a_preview_finding_even_where_it_is_real():
    # the trade: the path's one real finding moves to preview with the 22 wrong ones. The `bool()`
    # in `contains` stays default: `p` is the vmapped parameter, passed on by a call in sight
    [inside] = findings(OBJECT_METHOD, preview=False)
    assert (inside.code, inside.line, inside.preview) == ("JAX304", 12, False)
    [finding] = [f for f in findings(OBJECT_METHOD, preview=True) if f.code == "JAX305"]
    assert finding.preview and finding.line == 20
    ns = load(OBJECT_METHOD)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        ns["Difference"](ns["Circle"](1.0)).mask(jnp.zeros((3, 2)))
