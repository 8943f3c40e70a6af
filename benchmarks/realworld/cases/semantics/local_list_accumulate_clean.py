# source: https://github.com/jax-ml/jax/issues/27033
# pattern: a local Python list filled inside jit and reduced with sum/jnp.stack: local state, no leak
# expect: no-flag
# family: semantics
# strictness: strict
# run: f_comprehension(1.0, size=4)
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=("size",))
def f_comprehension(x, size):
    out = x + jnp.zeros(size)
    parts = []
    for i in range(8):
        parts.append(i * jnp.arange(size))
    return out + jnp.stack(parts).sum(0)
