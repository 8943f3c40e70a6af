"""A two-layer MLP fit with plain SGD, the way a first research prototype looks."""

from functools import partial

import jax
import jax.numpy as jnp

from mlp.config import TrainConfig


def init_params(key, n_in, hidden):
    k1, k2 = jax.random.split(key)
    return {
        "w1": jax.random.normal(k1, (n_in, hidden)) * 0.1,
        "b1": jnp.zeros(hidden),
        "w2": jax.random.normal(k2, (hidden, 1)) * 0.1,
    }


def loss_fn(params, xs, ys):
    h = jnp.tanh(xs @ params["w1"] + params["b1"])
    pred = (h @ params["w2"])[:, 0]
    return jnp.mean((pred - ys) ** 2)


def sgd_step(params, xs, ys, lr):
    grads = jax.grad(loss_fn)(params, xs, ys)
    return jax.tree.map(lambda p, g: p - lr * g, params, grads)


def fit(params, xs, ys, cfg: TrainConfig):
    losses = []
    for _ in range(cfg.steps):
        update = jax.jit(partial(sgd_step, lr=cfg.lr))
        params = update(params, xs, ys)
        losses.append(loss_fn(params, xs, ys))
    return params, jnp.stack(losses)
