# source: https://github.com/jkitchin/pounce/issues/795
# pattern: the bounds are a hashable tuple passed through static_argnames, so `float(ub[i])` and the finiteness test run on Python floats at trace time
# expect: no-flag
# family: control
# strictness: strict
# run: solve_box(jnp.ones(2), lb=(0.0, 0.0), ub=(1.0, float("inf")))
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


@partial(jax.jit, static_argnames=("lb", "ub"))
def solve_box(q, lb, ub):
    rows = []
    for i in range(len(ub)):
        if np.isfinite(float(ub[i])):
            rows.append(jnp.zeros_like(q).at[i].set(1.0))
    G = jnp.stack(rows) if rows else jnp.zeros((0, q.shape[0]))
    return jnp.clip(-q, jnp.asarray(lb), jnp.asarray(ub)), G
