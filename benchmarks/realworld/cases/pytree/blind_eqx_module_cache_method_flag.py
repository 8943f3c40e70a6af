# source: https://github.com/patrick-kidger/equinox/issues/268
# pattern: functools.cache on a method of an eqx.Module (every Module is a pytree): the cache keys on `self`, rebuilt from tracers under filter_jit, and keeps them alive
# expect: flag JAX102
# family: pytree
# strictness: strict
import functools

import equinox as eqx
import jax
import jax.numpy as jnp


class Kernel(eqx.Module):
    lengthscale: jax.Array

    @functools.cache
    def inv_ls2(self):
        return 1.0 / self.lengthscale**2

    def __call__(self, x, y):
        return jnp.exp(-0.5 * jnp.sum((x - y) ** 2) * self.inv_ls2())


@eqx.filter_jit
def gram(kernel, xs):
    return jax.vmap(lambda a: jax.vmap(lambda b: kernel(a, b))(xs))(xs)
