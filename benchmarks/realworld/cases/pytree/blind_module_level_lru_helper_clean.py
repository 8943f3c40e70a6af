# source: https://github.com/patrick-kidger/equinox/issues/268
# pattern: an eqx.Module method calls a module-level functools.lru_cache helper keyed by a Python int that returns NumPy quadrature nodes: the cache is not on the pytree and holds no tracers
# expect: no-flag
# family: pytree
# strictness: strict
# run: integrate(Quadrature(jnp.float32(2.0)), jnp.float32(1.0))
import functools

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np


@functools.lru_cache(maxsize=None)
def gauss_legendre(n: int):
    return np.polynomial.legendre.leggauss(n)


class Quadrature(eqx.Module):
    scale: jax.Array

    def __call__(self, upper):
        nodes, weights = gauss_legendre(8)
        x = 0.5 * upper * (nodes + 1.0)
        return 0.5 * upper * jnp.sum(weights * jnp.exp(-self.scale * x))


@eqx.filter_jit
def integrate(quad, upper):
    return quad(upper)
