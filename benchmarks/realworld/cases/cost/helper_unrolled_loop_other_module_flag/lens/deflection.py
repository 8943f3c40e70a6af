import jax
import jax.numpy as jnp

from lens.series import R_omega


@jax.jit
def deflection(z, t):
    return jnp.real(R_omega(z, t)) * (2.0 - t)
