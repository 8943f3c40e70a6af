import jax
import jax.numpy as jnp

from trainer.logs import record


@jax.jit
def train_step(params, batch):
    loss = jnp.mean((batch @ params) ** 2)
    record(loss)
    return params - 1e-3 * jax.grad(lambda p: jnp.mean((batch @ p) ** 2))(params)
