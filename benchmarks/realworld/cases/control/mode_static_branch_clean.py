# source: https://github.com/QuantEcon/jaxinterp/blob/HEAD/interp.py
# pattern: `if mode == "reflect":` / `elif mode == "wrap":` on a static_argnames string inside jit, indices handled with jnp.where
# expect: no-flag
# family: control
# strictness: strict
# run: apply_boundary(jnp.arange(5), 3, "reflect")
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=["mode"])
def apply_boundary(index, size, mode):
    if mode == "reflect":
        period = 2 * (size - 1)
        index = jnp.mod(index, period)
        return jnp.where(index < size, index, period - index)
    elif mode == "wrap":
        return jnp.mod(index, size)
    return jnp.clip(index, 0, size - 1)
