"""A flax struct state with a cached derived quantity, and jitted helpers with Python control flow
on traced values (other families' fixes, measured the same way)."""

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


@jax.jit
def log_prob(g, x):
    return -0.5 * jnp.sum(g.precision * (x - g.mean) ** 2) + jnp.sum(g.log_std)


@jax.jit
def soft_clip(x):
    if x > 1.0:
        return 1.0 + jnp.log(x)
    return x


@jax.jit
def halvings(x):
    n = 0
    while x > 1.0:
        x = x / 2.0
        n = n + 1
    return n
