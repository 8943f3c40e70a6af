"""A training-style loop that builds a new jit wrapper on every iteration.

Each `partial` and `lambda` is a new object, so jit's cache misses and XLA
compiles the same body again, every step.
"""

from functools import partial

import jax
import jax.numpy as jnp


def scaled_step(x, scale):
    return jnp.tanh(x * scale) + 0.5 * x


def run_partial(x: jax.Array, steps: int = 8) -> jax.Array:
    for i in range(steps):
        x = jax.jit(partial(scaled_step, scale=0.5 + i))(x)
    return x


def run_lambda(x: jax.Array, steps: int = 8) -> jax.Array:
    for i in range(steps):
        x = jax.jit(lambda v: scaled_step(v, 0.5 + i))(x)
    return x
