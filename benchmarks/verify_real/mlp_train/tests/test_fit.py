import jax
import jax.numpy as jnp

from mlp import fit
from mlp.config import TrainConfig
from mlp.train import init_params


def _data():
    xs = jax.random.normal(jax.random.PRNGKey(0), (16, 3))
    ys = jnp.sin(xs[:, 0])
    return xs, ys


def test_loss_goes_down():
    xs, ys = _data()
    params = init_params(jax.random.PRNGKey(1), 3, 8)
    _, losses = fit(params, xs, ys, TrainConfig(lr=0.2, steps=6))
    assert losses[-1] < losses[0]


def test_zero_steps_is_identity():
    xs, ys = _data()
    params = init_params(jax.random.PRNGKey(2), 3, 8)
    out, losses = fit(params, xs, ys, TrainConfig(steps=1))
    assert losses.shape == (1,)
