# source: https://github.com/p-doom/jasmine/pull/47
# pattern: a training loop logs step time from time.time() around an async jitted train_step (the PR reverted it as incorrect)
# expect: flag JAX501
# family: cost
# strictness: strict
# run: train(jnp.ones(2), [jnp.ones((3, 2))] * 2)
import time

import jax
import jax.numpy as jnp


@jax.jit
def train_step(params, batch):
    grads = jax.grad(lambda p: jnp.mean((batch @ p) ** 2))(params)
    return params - 1e-3 * grads


def train(params, batches):
    for step, batch in enumerate(batches):
        start = time.time()
        params = train_step(params, batch)
        elapsed = time.time() - start
        print(f"step {step}: {elapsed:.4f}s")
    return params
