"""A flax pytree whose `cached_property` never caches under jit and, read under a trace on an
instance the jitted function closes over (`scorer`), leaks a tracer into it."""

from functools import cached_property

import jax
import jax.numpy as jnp
from flax import struct


class Gaussian(struct.PyTreeNode):
    mean: jax.Array
    log_std: jax.Array

    @cached_property
    def precision(self) -> jax.Array:
        return jnp.exp(-2.0 * self.log_std)

    def log_prob(self, x: jax.Array) -> jax.Array:
        z = (x - self.mean) ** 2 * self.precision
        return -0.5 * jnp.sum(z) + jnp.sum(self.log_std)


@jax.jit
def total_log_prob(dist: Gaussian, xs: jax.Array) -> jax.Array:
    return jax.vmap(dist.log_prob)(xs).sum()


def scorer(dist: Gaussian):
    """A jitted scorer closing over `dist`: its first call stores a tracer on `dist`."""
    return jax.jit(lambda xs: jax.vmap(dist.log_prob)(xs).sum())
