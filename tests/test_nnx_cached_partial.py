"""JAX204: an `@nnx.jit` step called per batch with the same NNX graph objects is offered
`nnx.cached_partial` (Flax's performance guide), unsafe. The fixture
fixtures/jit_placement/nnx_cached_partial_unsafe.* holds the rewrite (text, idempotence, and
differential verification with compile counts); here, where it is and is not reported, and that
the rewritten loop trains the same model as the original."""

from __future__ import annotations

import ast
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from fixture_cases import FIXTURES, load_as_module

from codemods.jit_placement.nnx_step_without_cached_partial import NnxStepWithoutCachedPartialRule
from jaxfix.engine import analyze
from jaxfix.engine.config import Config

HEAD = '''
import jax
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(4, 1, rngs=rngs)

    def __call__(self, x):
        return self.linear(x)


@nnx.jit
def train_step(model, optimizer, x, y):
    loss, grads = nnx.value_and_grad(lambda m: jnp.mean((m(x) - y) ** 2))(model)
    optimizer.update(model, grads)
    return loss

'''

LOOP = '''
def fit(batches):
    model = MLP(nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
    for x, y in batches:
        loss = train_step(model, optimizer, x, y)
    return model
'''


def rows(source: str, unsafe: bool = False):
    result = analyze(textwrap.dedent(source), "train.py", Config(select=("JAX204",), unsafe_fixes=unsafe), fix=unsafe)
    assert result.error is None, result.error
    return [(f.line, f.fix.safety.value if f.fix else "none") for f in result.findings], result.fixed_source


def test_the_training_loop_is_reported_with_an_unsafe_fix():
    found, fixed = rows(HEAD + LOOP, unsafe=True)
    assert found == [(27, "unsafe")]
    assert "train_step_cached = nnx.cached_partial(train_step, model, optimizer)" in fixed
    assert "loss = train_step_cached(x, y)" in fixed
    assert NnxStepWithoutCachedPartialRule().could_match(ast.parse(HEAD + LOOP))
    assert rows(fixed, unsafe=True) == ([], None)  # the fix converges


# Each must-not-flag variant, with why; the buggy loop above is reported beside them.
NEGATIVES = {
    # already cached (Flax's performance guide, flax.readthedocs.io/en/latest/guides/performance.html)
    "cached": LOOP.replace(
        "    for x, y in batches:\n        loss = train_step(model, optimizer, x, y)",
        "    step = nnx.cached_partial(train_step, model, optimizer)\n    for x, y in batches:\n        loss = step(x, y)",
    ),
    # the loop rebinds the model: not the same graph object every trip
    "rebound_in_loop": LOOP.replace(
        "        loss = train_step(model, optimizer, x, y)",
        "        loss = train_step(model, optimizer, x, y)\n        model = MLP(nnx.Rngs(1))",
    ),
    # arguments that are not graph objects by this file's evidence (parameters)
    "parameters": '''
def fit(model, optimizer, batches):
    for x, y in batches:
        loss = train_step(model, optimizer, x, y)
    return model
''',
    # called once, not per trip
    "no_loop": LOOP.replace("    for x, y in batches:\n        loss", "    x, y = batches[0]\n    loss"),
}


@pytest.mark.parametrize("name", sorted(NEGATIVES))
def test_not_reported(name):
    assert rows(HEAD + NEGATIVES[name]) == ([], None)


def test_not_reported_outside_graph_mode_or_for_jax_jit():
    tree_mode = HEAD.replace("@nnx.jit\n", "@nnx.jit(graph=False)\n")
    assert rows(tree_mode + LOOP) == ([], None)
    plain_jit = HEAD.replace("@nnx.jit\n", "@jax.jit\n")
    assert rows(plain_jit + LOOP) == ([], None)


def test_the_rewritten_loop_trains_the_same_model(tmp_path):
    folder = FIXTURES / "jit_placement"
    original = load_as_module(tmp_path / "orig.py", (folder / "nnx_cached_partial_unsafe.in.py").read_text())
    rewritten = load_as_module(tmp_path / "new.py", (folder / "nnx_cached_partial_unsafe.out.py").read_text())
    batches = [(jnp.full((8, 4), 0.1 * k), jnp.full((8, 1), 0.5)) for k in range(5)]
    losses_a, params_a = original.fit(batches)
    losses_b, params_b = rewritten.fit(batches)
    np.testing.assert_allclose(np.asarray(losses_a), np.asarray(losses_b), rtol=1e-6)
    for a, b in zip(jax.tree_util.tree_leaves(params_a), jax.tree_util.tree_leaves(params_b)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    assert float(losses_b[-1]) < float(losses_b[0])  # it trained: the cached step updated `model`


def test_every_spelling_of_nnx_jit_is_screened_and_reported():
    for spelled in ("from flax.nnx import jit as J\n@J\n", "from functools import partial\n@partial(nnx.jit, donate_argnums=0)\n"):
        source = HEAD.replace("@nnx.jit\n", spelled) + LOOP
        assert NnxStepWithoutCachedPartialRule().could_match(ast.parse(textwrap.dedent(source)))
        assert [safety for _, safety in rows(source)[0]] == ["unsafe"]
