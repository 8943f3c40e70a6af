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

HEAD = """
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

"""

LOOP = """
def fit(batches):
    model = MLP(nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
    for x, y in batches:
        loss = train_step(model, optimizer, x, y)
    return model
"""


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
    "parameters": """
def fit(model, optimizer, batches):
    for x, y in batches:
        loss = train_step(model, optimizer, x, y)
    return model
""",
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
    for spelled in (
        "from flax.nnx import jit as J\n@J\n",
        "from functools import partial\n@partial(nnx.jit, donate_argnums=0)\n",
    ):
        source = HEAD.replace("@nnx.jit\n", spelled) + LOOP
        assert NnxStepWithoutCachedPartialRule().could_match(ast.parse(textwrap.dedent(source)))
        assert [safety for _, safety in rows(source)[0]] == ["unsafe"]


# -- where the step and its graph objects come from (recall on the blind pools, session 17) ------------

# A step defined inside the driver that calls it (OsaRobots/lbd@e186bbe81fec66cc81b22e523f8062df394fe239:
# src/models/main_mlp.py, `main` defines `@nnx.jit def train_step` and calls it 5000 times).
NESTED_STEP = """
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(4, 1, rngs=rngs)

    def __call__(self, x):
        return self.linear(x)


def fit(batches):
    model = MLP(nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)

    @nnx.jit
    def train_step(model, optimizer, x, y):
        loss, grads = nnx.value_and_grad(lambda m: jnp.mean((m(x) - y) ** 2))(model)
        optimizer.update(model, grads)
        return loss

    losses = []
    for x, y in batches:
        losses.append(train_step(model, optimizer, x, y))
    return losses, nnx.state(model, nnx.Param)
"""

# A notebook's globals read in a per-epoch function (jax-ml/jax-ai-stack@59de2e1f79348ac85ee26c463c3cede21d8908a5:
# docs/source/JAX_basic_text_classification.ipynb, `def train_one_epoch(epoch): for batch in ...: train_step(model, optimizer, batch)`
# with `model`, `optimizer` bound in another cell), and a model built by a factory of the file
# (mlnomadpy/flaxdocs@1eda4a34032021b2acff2e907bbf6de6762d169b: examples/scientific/gcn_karate.py, `model = create_model(...)`).
GLOBALS_AND_FACTORY = (
    HEAD
    + """
def create_model(seed):
    return MLP(nnx.Rngs(seed))


def train_one_epoch(batches):
    losses = []
    for x, y in batches:
        losses.append(train_step(model, optimizer, x, y))
    return losses


model = create_model(0)
optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
"""
)


def line_of(source: str, text: str) -> int:
    return textwrap.dedent(source)[: textwrap.dedent(source).index(text)].count("\n") + 1


def test_a_step_nested_in_its_driver_is_reported_and_the_fix_trains_the_same_model(tmp_path):
    found, fixed = rows(NESTED_STEP, unsafe=True)
    assert found == [(line_of(NESTED_STEP, "losses.append(train_step"), "unsafe")]
    assert "    train_step_cached = nnx.cached_partial(train_step, model, optimizer)\n    for x, y in batches:" in fixed
    assert NnxStepWithoutCachedPartialRule().could_match(ast.parse(NESTED_STEP))
    assert rows(fixed, unsafe=True) == ([], None)
    original = load_as_module(tmp_path / "orig.py", textwrap.dedent(NESTED_STEP))
    rewritten = load_as_module(tmp_path / "new.py", fixed)
    batches = [(jnp.full((8, 4), 0.1 * k), jnp.full((8, 1), 0.5)) for k in range(4)]
    (losses_a, params_a), (losses_b, params_b) = original.fit(batches), rewritten.fit(batches)
    np.testing.assert_allclose(np.asarray(losses_a), np.asarray(losses_b), rtol=1e-6)
    for a, b in zip(jax.tree_util.tree_leaves(params_a), jax.tree_util.tree_leaves(params_b)):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_module_globals_read_in_a_function_and_factory_built_models_are_graph_objects(tmp_path):
    found, fixed = rows(GLOBALS_AND_FACTORY, unsafe=True)
    assert found == [(line_of(GLOBALS_AND_FACTORY, "losses.append(train_step"), "unsafe")]
    assert "    train_step_cached = nnx.cached_partial(train_step, model, optimizer)\n    for x, y in batches:" in fixed
    original = load_as_module(tmp_path / "orig.py", textwrap.dedent(GLOBALS_AND_FACTORY))
    rewritten = load_as_module(tmp_path / "new.py", fixed)
    batches = [(jnp.full((8, 4), 0.1 * k), jnp.full((8, 1), 0.5)) for k in range(4)]
    np.testing.assert_allclose(
        np.asarray(original.train_one_epoch(batches)), np.asarray(rewritten.train_one_epoch(batches)), rtol=1e-6
    )


# Beside them, what is still not a graph object or not a step of this kind (each with why).
ORIGIN_NEGATIVES = {
    # the step is defined on every trip: a new function each time (JAX201's concern, not this rule's)
    "step_defined_per_trip": NESTED_STEP.replace(
        """
    @nnx.jit
    def train_step(model, optimizer, x, y):
        loss, grads = nnx.value_and_grad(lambda m: jnp.mean((m(x) - y) ** 2))(model)
        optimizer.update(model, grads)
        return loss

    losses = []
    for x, y in batches:
""",
        """
    losses = []
    for x, y in batches:

        @nnx.jit
        def train_step(model, optimizer, x, y):
            return model(x).mean()

""",
    ),
    # a factory that returns something else than a graph object (a state of arrays)
    "factory_of_state": GLOBALS_AND_FACTORY.replace(
        "    return MLP(nnx.Rngs(seed))", "    return nnx.state(MLP(nnx.Rngs(seed)))"
    ),
    # a global also bound to a value of unknown kind
    "global_rebound_elsewhere": GLOBALS_AND_FACTORY + "\nmodel = load_checkpoint()\n",
    # a local def of the same name shadows the jitted step
    "shadowed_step": GLOBALS_AND_FACTORY.replace(
        "def train_one_epoch(batches):\n",
        "def train_one_epoch(batches):\n    def train_step(*args):\n        return 0.0\n\n",
    ),
}


@pytest.mark.parametrize("name", sorted(ORIGIN_NEGATIVES))
def test_graph_objects_of_unknown_origin_are_not_reported(name):
    assert "train_step(model, optimizer, x, y)" in ORIGIN_NEGATIVES[name]
    assert rows(ORIGIN_NEGATIVES[name]) == ([], None)


def test_an_nnx_class_of_another_module_of_the_project_builds_a_graph_object(tmp_path):
    """flaxchat's scripts build `GPT` imported from `flaxchat.gpt` (mlnomadpy/flaxchat@9653ab459f445496262a42477617c6ae0c4253ef:
    scripts/train_local.py:98): the project index says it derives from `nnx.Module`."""
    from typer.testing import CliRunner

    from jaxfix.cli import app

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "gpt.py").write_text(HEAD.split("@nnx.jit")[0])
    script = tmp_path / "train.py"
    script.write_text(
        "import optax\nimport jax.numpy as jnp\nfrom flax import nnx\nfrom pkg.gpt import MLP\n\n\n"
        + "@nnx.jit"
        + HEAD.split("@nnx.jit")[1]
        + "\nmodel = MLP(nnx.Rngs(0))\noptimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)\n"
        + "for x, y in [(jnp.ones((2, 4)), jnp.ones((2, 1)))]:\n    train_step(model, optimizer, x, y)\n"
    )
    result = CliRunner().invoke(app, ["check", "--select", "JAX204", "--no-cache", str(tmp_path)])
    assert "train.py:" in result.output and "JAX204" in result.output, result.output
    alone = CliRunner().invoke(app, ["check", "--select", "JAX204", "--no-cache", str(script)])
    assert "JAX204" in alone.output  # checked alone, `nnx.Optimizer(model, ...)` shows what `model` is
    script.write_text(
        script.read_text().replace("nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)", "make_opt(model)")
    )
    result = CliRunner().invoke(app, ["check", "--select", "JAX204", "--no-cache", str(tmp_path)])
    assert "train.py:" in result.output and "JAX204" in result.output, result.output
    alone = CliRunner().invoke(app, ["check", "--select", "JAX204", "--no-cache", str(script)])
    assert "JAX204" not in alone.output  # without it, checked alone, the class's module is out of sight


def test_test_code_is_left_alone_unless_asked():
    """A test's training loop exercises the step (kmheckel/spyx@38374e96962ce4bae44a902e78520c0657b6bd86:
    tests/test_raven.py:244 runs 400 steps of a nested `@nnx.jit def step`); `include-tests` reports it."""
    source = textwrap.dedent(NESTED_STEP)
    skipped = analyze(source, "tests/test_fit.py", Config(select=("JAX204",)))
    assert skipped.error is None and skipped.findings == []
    asked = Config(select=("JAX204",)).with_options("jit-placement", **{"include-tests": True})
    assert [f.code for f in analyze(source, "tests/test_fit.py", asked).findings] == ["JAX204"]


KAN_TUTORIAL = """
import jax.numpy as jnp
import optax
from flax import nnx
from jaxkan.models.KAN import KAN

model = KAN(layer_dims=[1, 6, 1], layer_type="chebyshev", seed=42)
optimizer = nnx.Optimizer(model, optax.adam(learning_rate=0.001), wrt=nnx.Param)


@nnx.jit
def train_step(model, optimizer, X_train, y_train):
    loss, grads = nnx.value_and_grad(lambda m: jnp.mean((m(X_train) - y_train) ** 2))(model)
    optimizer.update(model, grads)
    return loss


for epoch in range(2000):
    loss = train_step(model, optimizer, X_train, y_train)
"""


def test_a_model_handed_to_nnx_optimizer_is_a_graph_object():
    """srigas/jaxKAN@9763fa3effa1452af5ed7aaa0e9633c0beee9d00: docs/tutorials/Tutorial 1 - Getting
    Started.ipynb (cells 17-25): `KAN` comes from the project's package, which a notebook does not
    see, but `nnx.Optimizer(model, ...)` takes only an NNX graph object."""
    assert rows(KAN_TUTORIAL)[0] == [(19, "unsafe")]
    # without the optimizer, nothing says what `KAN(...)` builds
    unseen = KAN_TUTORIAL.replace("nnx.Optimizer(model, optax.adam(learning_rate=0.001), wrt=nnx.Param)", "make(model)")
    assert rows(unseen)[0] == []


def test_a_loop_that_calls_a_method_of_the_model_for_its_effect():
    """srigas/jaxKAN@9763fa3effa1452af5ed7aaa0e9633c0beee9d00: Tutorial 7 calls
    `model.update_grids(X_train, G_new)` in the loop: a new grid, which a cached partial would not
    see. A method whose result is read (avitai/opifex's `float(model.compute_continuity_loss())`)
    changes nothing."""
    grids = KAN_TUTORIAL.replace(
        "    loss = train_step(",
        "    if epoch in grid_upds:\n        model.update_grids(X_train, 8)\n    loss = train_step(",
    )
    assert rows(grids)[0] == []
    reads = grids.replace("model.update_grids(X_train, 8)", "print(float(model.compute_continuity_loss()))")
    assert rows(reads)[0] == [(21, "unsafe")]


ANNOTATED_DRIVER = """
def train(model: MLP, optimizer: nnx.Optimizer, batches):
    losses = []
    for x, y in batches:
        loss = train_step(model, optimizer, x, y)
        losses.append(loss)
    return losses
"""


def test_parameters_annotated_with_an_nnx_class_are_graph_objects(tmp_path):
    """marbles3842/vae-jax@fb4c0972a389f43b2e42ba1b8b3aec5f87c9a221: train.py:61, `def train(model:
    VAE, optimizer: nnx.Optimizer, ...)` calls the `@nnx.jit` step once per MNIST batch (heldout26's
    recall set). An unannotated parameter, or one annotated with anything else, may be handed
    anything: not reported."""
    source = HEAD + ANNOTATED_DRIVER
    found, fixed = rows(source, unsafe=True)
    assert found == [(line_of(source, "loss = train_step("), "unsafe")]
    assert "    train_step_cached = nnx.cached_partial(train_step, model, optimizer)\n    for x, y in batches:" in fixed
    original = load_as_module(tmp_path / "orig.py", textwrap.dedent(source))
    rewritten = load_as_module(tmp_path / "new.py", fixed)
    batches = [(jnp.full((8, 4), 0.1 * k), jnp.full((8, 1), 0.5)) for k in range(4)]
    models = [m.MLP(m.nnx.Rngs(0)) for m in (original, rewritten)]
    losses = [
        m.train(model, m.nnx.Optimizer(model, m.optax.sgd(0.1), wrt=m.nnx.Param), batches)
        for m, model in zip((original, rewritten), models)
    ]
    np.testing.assert_allclose(np.asarray(losses[0]), np.asarray(losses[1]), rtol=1e-6)
    for a, b in zip(jax.tree_util.tree_leaves(models[0]), jax.tree_util.tree_leaves(models[1])):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    for other in ("model, optimizer: nnx.Optimizer", "model: jax.Array, optimizer: nnx.Optimizer"):
        unsure = source.replace("model: MLP, optimizer: nnx.Optimizer", other)
        assert rows(unsure) == ([], None), other
