# source: https://github.com/jax-ml/jax/issues/15761
# pattern: a script times a jitted call with time.perf_counter() before and after, without blocking on the result: it measures async dispatch, not the computation
# expect: flag JAX501
# family: cost
# strictness: strict
# run: (module-level code)
import time

import jax
import jax.numpy as jnp


@jax.jit
def some_func(vec, indices):
    return jnp.cumsum(vec[indices] ** 2)


timings = []
x = jnp.ones(20)
for n_indices in [5, 8, 10, 10]:
    li = jnp.arange(n_indices)
    start = time.perf_counter()
    some_func(x, li)
    end = time.perf_counter()
    timings.append(end - start)
