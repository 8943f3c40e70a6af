# source: https://github.com/jax-ml/jax/issues/1897
# pattern: a jitted finite-difference gradient loops `for d in range(3)` over spatial dimensions: three unrolled copies, cheaper than a scan
# expect: no-flag
# family: cost
# strictness: strict
# run: grad_norm(jnp.ones((4, 4, 4)))
import jax
import jax.numpy as jnp


@jax.jit
def grad_norm(field):
    total = jnp.zeros_like(field)
    for d in range(3):
        diff = jnp.roll(field, -1, axis=d) - field
        total = total + diff**2
    return jnp.sqrt(total)
