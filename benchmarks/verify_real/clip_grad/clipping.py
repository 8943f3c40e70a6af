"""Gradient clipping helpers, typed with jaxtyping and nothing else to run them."""

import jax
import jax.numpy as jnp
from jaxtyping import Array, Float


@jax.jit
def clip_by_norm(g: Float[Array, "n"], max_norm: float) -> Float[Array, "n"]:
    norm = jnp.linalg.norm(g)
    if norm > max_norm:
        return g * (max_norm / norm)
    return g


@jax.jit
def soft_threshold(x: Float[Array, "n"], lam: float):
    if lam <= 0:
        return x
    return jnp.sign(x) * jnp.maximum(jnp.abs(x) - lam, 0.0)
