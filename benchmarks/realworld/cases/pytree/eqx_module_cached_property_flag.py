# source: https://github.com/patrick-kidger/equinox/issues/539
# pattern: functools.cached_property on an eqx.Module for a quantity derived from its leaves, used inside filter_jit
# expect: flag JAX101
# family: pytree
# strictness: strict
# run: close_approach(Orbit(jnp.asarray(2.), jnp.asarray(.1)), 1.0)
from functools import cached_property

import equinox as eqx
import jax
import jax.numpy as jnp


class Orbit(eqx.Module):
    a: jax.Array
    e: jax.Array

    @cached_property
    def periapsis(self):
        return self.a * (1 - self.e)


@eqx.filter_jit
def close_approach(orbit, r):
    return jnp.minimum(orbit.periapsis, r)
