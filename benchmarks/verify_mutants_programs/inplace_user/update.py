"""NumPy-style in-place updates inside jitted functions, as users port them."""

import jax
import jax.numpy as jnp


@jax.jit
def set_boundary(u: jax.Array, left: float, right: float):
    u = u * 1.0
    u[0] = left
    u[-1] = right
    return u


@jax.jit
def decay_tail(u: jax.Array, rate: float):
    u = u + 0.0
    u[2:] -= rate * u[2:]
    u[1] *= 0.5
    return u
