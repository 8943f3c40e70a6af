"""A Flax NNX module whose `cached_property` breaks under `nnx.jit` (measured, flax 0.12.8): first
read inside the jitted function, the cache stores a tracer on the real module and the next call
raises UnexpectedTracerError; filled eagerly, the cached array is static metadata: it stays stale when
the parameters change, and `nnx.jit` raises ValueError once a second instance reaches the function."""

from functools import cached_property

import jax
import jax.numpy as jnp
from flax import nnx


class Gaussian(nnx.Module):
    def __init__(self, mean: jax.Array, log_std: jax.Array):
        self.mean = nnx.Param(mean)
        self.log_std = nnx.Param(log_std)

    @cached_property
    def precision(self) -> jax.Array:
        return jnp.exp(-2.0 * self.log_std[...])

    def log_prob(self, x: jax.Array) -> jax.Array:
        z = (x - self.mean[...]) ** 2 * self.precision
        return -0.5 * jnp.sum(z) + jnp.sum(self.log_std[...])


@nnx.jit
def total_log_prob(dist: Gaussian, xs: jax.Array) -> jax.Array:
    return jax.vmap(dist.log_prob)(xs).sum()
