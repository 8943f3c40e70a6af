# source: https://github.com/patrick-kidger/equinox/issues/539
# pattern: `functools.cached_property` for a quantity derived from the leaves of an `eqx.Module`: the cache is lost at every flatten/unflatten (each jit/grad/vmap boundary) and filled with a tracer when first read under jit (session 17: passed as an argument, the instance is rebuilt from its leaves inside the trace and its cache dies there; what leaks a tracer is the closed-over instance read under jit at the end, which JAX101 needs on a non-NNX pytree)
# expect: flag JAX101
# family: pytree
# strictness: strict
# run: energy(Spring(jnp.float32(2.0), jnp.float32(0.5)), jnp.ones(3))
from functools import cached_property

import equinox as eqx
import jax
import jax.numpy as jnp


class Spring(eqx.Module):
    stiffness: jax.Array
    mass: jax.Array

    @cached_property
    def frequency(self):
        return jnp.sqrt(self.stiffness / self.mass)

    def __call__(self, x):
        return 0.5 * self.mass * self.frequency**2 * jnp.sum(x**2)


@eqx.filter_jit
def energy(spring, x):
    return spring(x)


def energy_of(spring: Spring):
    return eqx.filter_jit(lambda x: spring(x))
