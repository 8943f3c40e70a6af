import jax.numpy as jnp


def make_grid(t0, tf, num):
    if num < 2:
        raise ValueError("a grid needs at least two points")
    return jnp.linspace(t0, tf, num)
