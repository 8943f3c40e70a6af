# source: https://github.com/jkitchin/pounce/issues/795
# pattern: a jitted QP layer tests each bound with `np.isfinite(float(ub[i]))`; with jnp bounds, `ub[i]` is a tracer under jit and float() raises ConcretizationTypeError
# expect: flag JAX304
# family: control
# strictness: strict
# run: solve_box(jnp.ones(2), jnp.zeros(2), jnp.ones(2))
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def solve_box(q, lb, ub):
    rows = []
    for i in range(lb.shape[0]):
        if np.isfinite(float(ub[i])):
            rows.append(jnp.zeros_like(q).at[i].set(1.0))
    G = jnp.stack(rows) if rows else jnp.zeros((0, q.shape[0]))
    return jnp.clip(-q, lb, ub), G
