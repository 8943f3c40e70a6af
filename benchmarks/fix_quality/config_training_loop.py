"""Linear regression trained the usual way: a frozen config, a jitted partial per step, a
per-call jitted update in a helper the loop calls."""

from dataclasses import dataclass
from functools import partial

import jax
import jax.numpy as jnp


@dataclass(frozen=True)
class Config:
    lr: float = 0.05
    l2: float = 1e-3
    loss: str = "mse"
    epochs: int = 2


def loss_fn(cfg, params, batch):
    x, y = batch
    pred = x @ params["w"] + params["b"]
    err = pred - y
    data = jnp.mean(err**2) if cfg.loss == "mse" else jnp.mean(jnp.abs(err))
    return data + cfg.l2 * jnp.sum(params["w"] ** 2)


def sgd(params, grads, lr):
    return jax.jit(lambda p, g: jax.tree_util.tree_map(lambda a, b: a - lr * b, p, g))(params, grads)


def train(params, batches, cfg):
    history = []
    for _ in range(cfg.epochs):
        for batch in batches:
            loss = jax.jit(partial(loss_fn, cfg))(params, batch)
            grads = jax.grad(partial(loss_fn, cfg))(params, batch)
            params = sgd(params, grads, cfg.lr)
            history.append(loss)
    return params, jnp.stack(history)


def make_data(key, n_batches=3, batch=16, dim=4):
    kx, kw = jax.random.split(key)
    xs = jax.random.normal(kx, (n_batches, batch, dim))
    true_w = jax.random.normal(kw, (dim,))
    return [(xs[i], xs[i] @ true_w + 0.5) for i in range(n_batches)]


if __name__ == "__main__":
    batches = make_data(jax.random.PRNGKey(0))
    params = {"w": jnp.zeros(4), "b": jnp.zeros(())}
    params, history = train(params, batches, Config())
    print(history)
