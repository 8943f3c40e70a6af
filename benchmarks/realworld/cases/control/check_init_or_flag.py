# source: https://github.com/GalacticDynamics/galax/pull/692
# pattern: eqx.Module __check_init__ validates fields with Python `or` on array comparisons; the module is built inside a jitted function
# expect: flag JAX301|JAX305
# family: control
# strictness: callgraph
# run: energy(1.0, 1.0, 0.5, 2.0)
import equinox as eqx
import jax
import jax.numpy as jnp


class NFWPotential(eqx.Module):
    m: jax.Array
    r_s: jax.Array
    a: jax.Array

    def __check_init__(self):
        if (self.a < 0) or (self.a > 1):
            raise ValueError("a must be in [0, 1]")

    def potential(self, r):
        return -self.m * jnp.log1p(r / self.r_s) / r


@jax.jit
def energy(m, r_s, a, r):
    return NFWPotential(m, r_s, a).potential(r)
