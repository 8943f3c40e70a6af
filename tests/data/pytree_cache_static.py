import functools

import jax
import jax.numpy as jnp
from flax import struct


class M(struct.PyTreeNode):
    w: jax.Array

    @functools.cached_property
    def n(self) -> int:
        return self.w.shape[0]

    @functools.cached_property
    def total(self) -> jax.Array:
        return jnp.zeros(self.n) + jnp.sum(self.w)


class S(struct.PyTreeNode):
    w: jax.Array

    @functools.cached_property
    def shape(self) -> tuple[int, ...]:
        return self.w.shape
