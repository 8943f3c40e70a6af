"""A Gaussian prior for a VAE, as a flax struct, with a KL term that branches on the data."""

import functools

import jax
import jax.numpy as jnp
from flax import struct


@struct.dataclass
class GaussianPrior:
    mean: jax.Array
    log_std: jax.Array

    @functools.cached_property
    def variance(self):
        return jnp.exp(2.0 * self.log_std)

    def log_prob(self, z):
        var = jnp.exp(2.0 * self.log_std)
        return -0.5 * jnp.sum((z - self.mean) ** 2 / var + 2.0 * self.log_std + jnp.log(2 * jnp.pi))


@jax.jit
def kl_term(prior: GaussianPrior, z: jax.Array, beta: float):
    lp = prior.log_prob(z)
    if beta > 1.0:
        return -beta * lp
    return -lp
