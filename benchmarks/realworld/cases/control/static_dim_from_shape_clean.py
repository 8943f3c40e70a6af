# source: https://github.com/QuantEcon/jaxinterp/blob/HEAD/interp.py
# pattern: a jitted interpolator passes `dim = points.shape[0]` (with np.shape and x.size checks) as a static argument to another jitted function
# expect: no-flag
# family: control
# strictness: strict
# run: lin_interp((jnp.linspace(0,1,4), jnp.linspace(0,1,4)), jnp.ones((4,4)), jnp.ones((2,3))*.5)
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


@partial(jax.jit, static_argnames=["dim"])
def vals_to_coords(grids, x_vals, dim):
    intervals = jnp.asarray([grid[1] - grid[0] for grid in grids]).reshape(dim, 1)
    low_bounds = jnp.asarray([grid[0] for grid in grids]).reshape(dim, 1)
    return (x_vals - low_bounds) / intervals


@jax.jit
def lin_interp(grid, values, points):
    dim = points.shape[0]
    if np.shape(values)[0] != grid[0].size or values.size == 0:
        raise ValueError("values do not match the grid")
    coords = vals_to_coords(grid, points, dim)
    return jax.scipy.ndimage.map_coordinates(values, coords, order=1, mode="nearest")
