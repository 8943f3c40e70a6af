"""Which JAX4xx evidence paths report by default and which only in preview mode (issue #29;
`codemods/trace_time_semantics/preview.py` holds the decision and its first-contact figures).

Each case is cut down from the spent blind pools' code (cited): the default finding is reported
without `--preview`, the preview one only with it (and carries `preview=True`)."""

from __future__ import annotations

import textwrap

import pytest
from test_trace_time_semantics import HEALPIX_MAPS

from jaxfix.engine import analyze
from jaxfix.engine.config import Config


def found(source: str, code: str, preview: bool) -> list[tuple[int, bool]]:
    result = analyze(textwrap.dedent(source), "case.py", Config(select=(code,), preview=preview))
    assert result.error is None, result.error
    return [(f.line, f.preview) for f in result.findings if f.code == code]


def default_and_preview(source: str, code: str) -> tuple[list, list]:
    return found(source, code, preview=False), found(source, code, preview=True)


# FLAIROx/JaxMARL@c793d095618c6d3edfb5632802348f57b70a4b94:jaxmarl/environments/jaxnav/jaxnav_graph_utils.py:87
PRINT_IN_JIT = """
import jax
import jax.numpy as jnp


@jax.jit
def grid_to_graph(grid):
    nodes = grid.flatten()
    print("nodes", nodes)
    return jnp.argmax(~nodes)
"""

# google-research/long-range-arena@cd31e5c6b8e5bceabd28de2d2afb23f7ae5d36d8:lra_benchmarks/text_classification/train.py:129
LOGGING_IN_PMAP = """
import jax
from absl import logging


def eval_step(model, batch):
    logits = model(batch["inputs"], train=False)
    logging.info(logits)
    return logits.mean()


p_eval_step = jax.pmap(eval_step, axis_name="batch")
"""

# jax-ml/bonsai@36284254cf738d99c1c5d1e3a292d27656a0a365:bonsai/models/sam2/model_sam2_transforms.py:123
NUMPY_ON_OWN_PARAMETER = """
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


class SAM2Transforms:
    @partial(jax.jit, static_argnames=["self", "do_postprocess"])
    def postprocess_masks(self, masks, *, do_postprocess=False):
        if do_postprocess:
            masks_np = np.array(masks)
            masks = jnp.array(masks_np)
        return masks
"""

# google-deepmind/jax_privacy@8967688c26d46f3b74bfdfe61ef1f984b887abab:jax_privacy/matrix_factorization/buffered_toeplitz.py:431
# (the check runs only `if not skip_checks`, and the traced caller passes skip_checks=True)
NUMPY_ON_DERIVED_VALUE = """
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def inverse(theta, omega, skip_checks=True):
    theta2 = theta - jnp.outer(omega, omega)
    evals = jnp.linalg.eigvals(theta2).real
    evecs = omega[:, None] / (evals - omega[:, None])
    if not skip_checks:
        diagonalized = evecs @ jnp.diag(evals) @ jnp.linalg.inv(evecs)
        if not np.allclose(diagonalized, theta2, atol=1e-7):
            raise RuntimeError("inverse is wrong")
    return evecs
"""

# jax-ml/jax#7032 (benchmarks/realworld semantics/inplace_setitem_jnp_flag.py): the store into a
# name bound to `jnp.ones`; xlnwel/grl2-jax@616f65a9dc6fae565ad635e8b9d25dbf1ac609cd
# envs/smac_env/state2obs.py:116 is the same path (`move_feats = jnp.zeros(n)`, `move_feats[0] = 1`)
STORE_INTO_JNP_ARRAY = """
import jax
import jax.numpy as jnp


def jx_warp(boxes, M, width):
    n = boxes.shape[0]
    xy = jnp.ones((n * 4, 3))
    xy[:, :2] = boxes[:, [0, 1, 2, 3, 0, 3, 2, 1]].reshape(n * 4, 2)
    xy = xy @ M.T
    return jnp.clip(xy[:, :2], 0, width)


warped = jax.jit(jx_warp)
"""

# jax-ml/bonsai@36284254cf738d99c1c5d1e3a292d27656a0a365:bonsai/models/sam2/model_sam2_transforms.py:36
# (`filled = mask.copy()` then an item store; there `mask` is a NumPy array from the caller)
STORE_INTO_COPY_OF_PARAMETER = """
import jax


@jax.jit
def fill_holes(mask):
    filled = mask.copy()
    filled[0] = 1
    return filled
"""

# AakashKumarNain/TF_JAX_tutorials@ed6f75985f2f3a9e6651b30d6bd3673cc85a0578:
# src/notebooks/jax_tutorials/chapter_4_just_in_time_compilation.ipynb cell 16
APPEND_TRACER_TO_GLOBAL = """
from jax import jit

squared_numbers = []


def number_squared(num):
    global squared_numbers
    squared = num ** 2
    squared_numbers.append(squared)
    return squared


number_squared_jit = jit(number_squared)
"""

# AakashKumarNain/TF_JAX_tutorials@ed6f75985f2f3a9e6651b30d6bd3673cc85a0578:
# src/notebooks/jax_tutorials/chapter_2_pure_functions.ipynb cells 5-6 (a real stale read, but
# the path was 7 real in about 75 on first contact)
STALE_GLOBAL_READ = """
from jax import jit

counter = 5


def add_global_value(x):
    return x + counter


y = jit(add_global_value)(2)
counter = 10
y = jit(add_global_value)(2)
"""

# fgiral000/gencast-flax-nnx@297e7c5629d3c1ff65b84e2bcf90ca8453975439:common/xarray_jax.py:584
# (the output treedef recorded while pmap traces, read after each call: by design)
NONLOCAL_TREEDEF = """
import jax


def pmap(fn):
    output_treedef = None

    def fn_passed_to_pmap(*flat_args):
        result = fn(*flat_args)
        nonlocal output_treedef
        flat_result, output_treedef = jax.tree_util.tree_flatten(result)
        return flat_result

    pmapped_fn = jax.pmap(fn_passed_to_pmap)

    def result_fn(*args):
        flat_result = pmapped_fn(*args)
        return jax.tree_util.tree_unflatten(output_treedef, flat_result)

    return result_fn
"""

# sukhdeep2/jax_healpix@6e77c6c jax_healpix/SPHT_jax.py:317 (heldout14): `maps` is a dict of arrays
# handed to the jitted function; a store into a bare parameter was default until session 22
STORE_INTO_OWN_PARAMETER = "\nimport jax\n\n" + HEALPIX_MAPS

# (code, source, the text of the reported line)
DEFAULT = [
    ("JAX401", PRINT_IN_JIT, 'print("nodes", nodes)'),
    ("JAX403", STORE_INTO_JNP_ARRAY, "xy[:, :2] ="),
]
# JAX402 and JAX404 are preview as whole rules since session 22 (`preview.PREVIEW_RULES`): their
# surest paths (a bare parameter, a write that stores a tracer) are here too
PREVIEW = [
    ("JAX401", LOGGING_IN_PMAP, "logging.info(logits)"),
    ("JAX402", NUMPY_ON_OWN_PARAMETER, "np.array(masks)"),
    ("JAX402", NUMPY_ON_DERIVED_VALUE, "np.allclose("),
    ("JAX403", STORE_INTO_OWN_PARAMETER, "maps[s] ="),
    ("JAX403", STORE_INTO_COPY_OF_PARAMETER, "filled[0] = 1"),
    ("JAX404", APPEND_TRACER_TO_GLOBAL, "squared_numbers.append(squared)"),
    ("JAX404", STALE_GLOBAL_READ, "return x + counter"),
    ("JAX404", NONLOCAL_TREEDEF, "flat_result, output_treedef ="),
]


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(textwrap.dedent(source).splitlines(), 1) if text in line)


@pytest.mark.parametrize(("code", "source", "text"), DEFAULT, ids=[f"{c}:{t}" for c, _, t in DEFAULT])
def test_a_default_path_is_reported_without_preview(code, source, text):
    shown, whole = default_and_preview(source, code)
    assert shown == [(line_of(source, text), False)]
    assert whole == shown


@pytest.mark.parametrize(("code", "source", "text"), PREVIEW, ids=[f"{c}:{t}" for c, _, t in PREVIEW])
def test_a_preview_path_is_reported_only_in_preview(code, source, text):
    shown, whole = default_and_preview(source, code)
    assert shown == []
    assert whole == [(line_of(source, text), True)]


def test_the_eager_store_into_a_jnp_constructor_stays_default():
    # sotetsuk/pgx@079b2d730e3845c25d49d99e0ccf9a374dd04cb9:pgx/bridge_bidding.py:765 (nothing traces it)
    source = """
    import jax.numpy as jnp


    def _pbn_to_key(pbn):
        key = jnp.zeros(52, dtype=jnp.int32)
        for player, hand in enumerate(pbn.split()):
            for card in hand:
                key[int(card)] = player
        return key.reshape(4, 13)
    """
    line = line_of(source, "key[int(card)] = player")
    assert default_and_preview(source, "JAX403") == ([(line, False)], [(line, False)])
