import jax.numpy as jnp

from .jit import jit


@jit
def curve_length_pure(gammadash):
    return jnp.mean(jnp.linalg.norm(gammadash, axis=1))


def curve_lengths(curves):
    return [curve_length_pure(c) for c in curves]
