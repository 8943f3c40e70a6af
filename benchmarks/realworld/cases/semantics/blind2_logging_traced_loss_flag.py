# source: https://github.com/LeCAR-Lab/CoVO-MPC/issues/2
# pattern: a loss helper logs `jnp.mean(total_loss)` with `logging.info` from inside a jitted update: the log line shows a tracer, once, at trace time, not the value of each step
# expect: flag JAX401
# family: semantics
# strictness: strict
# run: update(jnp.ones(3), jnp.ones((4, 3)))
import logging

import jax
import jax.numpy as jnp


@jax.jit
def update(params, batch):
    total_loss = jnp.sum((batch - params) ** 2, axis=-1)
    total_loss_mean = jnp.mean(total_loss)
    logging.info(total_loss_mean)
    return params - 0.1 * jax.grad(lambda p: jnp.mean((batch - p) ** 2))(params)
