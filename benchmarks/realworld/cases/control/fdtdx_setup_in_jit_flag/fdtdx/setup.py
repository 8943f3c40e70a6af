import jax
import jax.numpy as jnp

from fdtdx.pml import PerfectlyMatchedLayer


def place_objects(resolution):
    return PerfectlyMatchedLayer(10).place_on_grid(resolution)


@jax.jit
def simulate(resolution, field):
    pml = place_objects(resolution)
    return field * jnp.exp(-pml.sigma_end)
