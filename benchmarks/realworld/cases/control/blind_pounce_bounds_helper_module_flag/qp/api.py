import jax
import jax.numpy as jnp

from qp._bounds import _expand_bounds


@jax.jit
def solve_qp(q, lb, ub):
    G, h = _expand_bounds(q.shape[0], lb, ub)
    x = jnp.clip(-q, lb, ub)
    return x, jnp.max(G @ x - h)
