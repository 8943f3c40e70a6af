# source: https://github.com/patrick-kidger/equinox/issues/539
# pattern: functools.cached_property on an eqx.Module for a quantity derived from its leaves, used inside filter_jit (session 17: passed as an argument, the instance is rebuilt from its leaves inside the trace and its cache dies there; what leaks a tracer is the closed-over instance read under jit at the end, which JAX101 needs on a non-NNX pytree)
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


EARTH = Orbit(jnp.asarray(1.0), jnp.asarray(0.0167))
earth_approach = eqx.filter_jit(lambda r: jnp.minimum(EARTH.periapsis, r))
