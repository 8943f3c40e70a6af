# source: https://github.com/jax-ml/jax/issues/27033
# pattern: `for i in range(size)` inside jit with `size` a static argument called with 10_000: unrolled, only knowable from the call site
# expect: flag JAX502
# family: cost
# strictness: hard
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=("size",))
def f_for_loop(x, size):
    out = x + jnp.zeros(size)
    for i in range(size):
        out = out + i * jnp.arange(size)
    return out


f_for_loop(1.0, size=10_000)
