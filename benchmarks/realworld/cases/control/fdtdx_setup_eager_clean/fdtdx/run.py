import jax
import jax.numpy as jnp

from fdtdx.pml import PerfectlyMatchedLayer


@jax.jit
def step(field, sigma):
    return field * jnp.exp(-sigma)


def main(resolution, field, steps=100):
    pml = PerfectlyMatchedLayer(10).place_on_grid(resolution)
    for _ in range(steps):
        field = step(field, pml.sigma_end)
    return field
