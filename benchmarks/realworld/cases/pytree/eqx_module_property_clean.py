# source: https://github.com/patrick-kidger/equinox/issues/539
# pattern: the maintainer's answer: a plain @property on the eqx.Module (XLA CSE removes recomputation under jit)
# expect: no-flag
# family: pytree
# strictness: strict
# run: close_approach(Orbit(jnp.asarray(2.0), jnp.asarray(0.1)), 1.0)
import equinox as eqx
import jax
import jax.numpy as jnp


class Orbit(eqx.Module):
    a: jax.Array
    e: jax.Array

    @property
    def periapsis(self):
        return self.a * (1 - self.e)


@eqx.filter_jit
def close_approach(orbit, r):
    return jnp.minimum(orbit.periapsis, r)
