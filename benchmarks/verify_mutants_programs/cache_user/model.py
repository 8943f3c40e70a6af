"""A flax struct model with two cached derived quantities, read inside a jitted loss."""

import functools

import flax
import jax
import jax.numpy as jnp


@flax.struct.dataclass
class Gaussian:
    mean: jax.Array
    log_std: jax.Array

    @functools.cached_property
    def precision(self) -> jax.Array:
        return jnp.exp(-2.0 * self.log_std)

    @functools.cached_property
    def log_norm(self) -> jax.Array:
        return jnp.sum(self.log_std) + 0.5 * self.mean.shape[0] * jnp.log(2 * jnp.pi)


@jax.jit
def nll(g: Gaussian, x: jax.Array):
    return 0.5 * jnp.sum((x - g.mean) ** 2 * g.precision) + g.log_norm
