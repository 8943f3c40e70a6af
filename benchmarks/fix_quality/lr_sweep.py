"""A learning-rate and optimizer sweep: each run jits its update inside the loop."""

from functools import partial

import jax
import jax.numpy as jnp


def update(params, x, y, lr, momentum_buf, method):
    grads = jax.grad(lambda p: jnp.mean((x @ p - y) ** 2))(params)
    if method == "momentum":
        momentum_buf = 0.9 * momentum_buf + grads
        return params - lr * momentum_buf, momentum_buf
    return params - lr * grads, momentum_buf


def sweep(x, y, lrs=(0.1, 0.01), steps=3):
    results = {}
    for method in ("sgd", "momentum"):
        for lr in lrs:
            params, buf = jnp.zeros(x.shape[1]), jnp.zeros(x.shape[1])
            for _ in range(steps):
                params, buf = jax.jit(partial(update, lr=lr, method=method))(params, x, y, momentum_buf=buf)
            results[(method, lr)] = params
    return results
