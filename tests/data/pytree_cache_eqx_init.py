import functools

import equinox as eqx
import jax
import jax.numpy as jnp


class L(eqx.Module):
    w: jax.Array

    def __init__(self, n):
        """Build."""
        self.w = jnp.ones(n)

    @functools.cached_property
    def b(self) -> jax.Array:
        return jnp.sum(jnp.sin(self.w))


class Sub(L):
    @functools.cached_property
    def c(self) -> jax.Array:
        return self.b * 2
