"""A training step that logs as users write it: print inside the jitted step."""

import jax
import jax.numpy as jnp


@jax.jit
def sgd_step(w: jax.Array, x: jax.Array, lr: float):
    loss = jnp.mean((x @ w) ** 2)
    grad = jax.grad(lambda v: jnp.mean((x @ v) ** 2))(w)
    print("loss", loss, "grad norm", jnp.linalg.norm(grad))
    return w - lr * grad
