import jax
import jax.numpy as jnp

from grids.make import make_grid


@jax.jit
def integrate(y0):
    ts = make_grid(0.0, 1.0, 16)
    return y0 * jnp.exp(-ts)
