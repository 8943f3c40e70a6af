import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np

from lib.base import AbstractKernel


@functools.lru_cache(maxsize=None)
def quadrature_weights(n):
    return np.polynomial.legendre.leggauss(n)[1]


class RBF(AbstractKernel):
    lengthscale: jax.Array

    @property
    def inv_ls2(self):
        return 1.0 / self.lengthscale**2

    def __call__(self, x, y):
        return jnp.exp(-0.5 * jnp.sum((x - y) ** 2) * self.inv_ls2)


@eqx.filter_jit
def gram(kernel, xs):
    w = jnp.asarray(quadrature_weights(4))
    return jnp.sum(w) * jax.vmap(lambda a: jax.vmap(lambda b: kernel(a, b))(xs))(xs)
