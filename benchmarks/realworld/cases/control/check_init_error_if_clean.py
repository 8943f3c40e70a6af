# source: https://github.com/GalacticDynamics/galax/pull/692
# pattern: the fix of the thread: traced validation through eqx.error_if with jnp.logical_or, no Python bool on arrays
# expect: no-flag
# family: control
# strictness: strict
# run: energy(1.0, 1.0, 0.5, 2.0)
import equinox as eqx
import jax
import jax.numpy as jnp


class NFWPotential(eqx.Module):
    m: jax.Array
    r_s: jax.Array
    a: jax.Array

    def __check_init__(self):
        bad = jnp.logical_or(self.a < 0, self.a > 1)
        eqx.error_if(self.a, bad, "a must be in [0, 1]")

    def potential(self, r):
        return -self.m * jnp.log1p(r / self.r_s) / r


@jax.jit
def energy(m, r_s, a, r):
    return NFWPotential(m, r_s, a).potential(r)
