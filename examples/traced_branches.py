"""Python `if` and `while` on traced values: both crash under jit with TracerBoolConversionError."""

import jax
import jax.numpy as jnp


@jax.jit
def soft_clip(x: jax.Array) -> jax.Array:
    if x > 1.0:
        return 1.0 + jnp.log(x)
    return x


@jax.jit
def count_halvings(x: float) -> jax.Array:
    steps = 0
    while x > 1.0:
        x = x / 2.0
        steps = steps + 1
    return steps
