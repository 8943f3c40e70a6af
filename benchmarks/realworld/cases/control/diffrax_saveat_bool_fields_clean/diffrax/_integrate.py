import equinox as eqx
import jax
import jax.numpy as jnp

from diffrax._misc import is_tuple_of_ints
from ._saveat import SaveAt


@eqx.filter_jit
def diffeqsolve(y0, shape, saveat: SaveAt):
    if is_tuple_of_ints(shape):
        struct = jax.ShapeDtypeStruct(shape, y0.dtype)
    else:
        struct = shape
    ys = y0 + jnp.zeros(struct.shape, struct.dtype)
    dense = None
    if saveat.dense:
        dense = jnp.cumsum(ys)
    solver_state = ys * 2 if saveat.solver_state else None
    return ys, dense, solver_state
