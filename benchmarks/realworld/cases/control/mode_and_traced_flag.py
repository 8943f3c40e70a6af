# source: https://github.com/QuantEcon/jaxinterp/blob/HEAD/interp.py
# pattern: `if mode == "constant" and jnp.any(coords < 0):` inside a jitted interpolation wrapper: the static half does not save the traced half
# expect: flag JAX301|JAX305
# family: control
# strictness: strict
# run: map_coords(jnp.ones((3,3)), jnp.zeros((2,4)), mode="constant")
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=["mode"])
def map_coords(vals, coords, mode="nearest"):
    if mode == "constant" and jnp.any(coords < 0):
        vals = jnp.pad(vals, 1)
        coords = coords + 1
    return jax.scipy.ndimage.map_coordinates(vals, coords, order=1, mode=mode)
