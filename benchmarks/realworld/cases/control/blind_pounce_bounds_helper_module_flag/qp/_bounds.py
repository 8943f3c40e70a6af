import jax.numpy as jnp
import numpy as np


def _expand_bounds(n, lb, ub):
    rows, h = [], []
    for i in range(n):
        if np.isfinite(float(ub[i])):
            rows.append(jnp.zeros(n).at[i].set(1.0))
            h.append(ub[i])
        if np.isfinite(float(lb[i])):
            rows.append(jnp.zeros(n).at[i].set(-1.0))
            h.append(-lb[i])
    return jnp.stack(rows), jnp.stack(h)
