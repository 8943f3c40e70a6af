"""The Flax NNX spelling of jit_in_loop.py: `nnx.jit` of a new partial or lambda every iteration.

Each `partial` and `lambda` is a new object, so the jit cache misses and XLA compiles the same
body again, every step. `nnx.jit` also wraps even the same function in a new object per call.
"""

from functools import partial

import jax
import jax.numpy as jnp
from flax import nnx


class Gain(nnx.Module):
    def __init__(self, dim: int):
        self.dim = dim  # Python config: static under nnx.jit
        self.w = nnx.Param(jnp.linspace(0.5, 1.5, dim))  # a Variable: traced under nnx.jit


def scaled_step(model: Gain, x: jax.Array, scale) -> jax.Array:
    return jnp.tanh(x * model.w[...] * scale) + 0.5 * x


def run_partial(model: Gain, x: jax.Array, steps: int = 8) -> jax.Array:
    for i in range(steps):
        x = nnx.jit(partial(scaled_step, scale=0.5 + i))(model, x)
    return x


def run_lambda(model: Gain, x: jax.Array, steps: int = 8) -> jax.Array:
    for i in range(steps):
        x = nnx.jit(lambda m, v: scaled_step(m, v, 0.5 + i))(model, x)
    return x
