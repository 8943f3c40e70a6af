# source: https://github.com/jax-ml/jax/issues/1832
# pattern: the advice from the thread: jit once outside the timing, and the timed lambda ends with `.block_until_ready()`
# expect: no-flag
# family: cost
# strictness: strict
# run: (module-level code)
import timeit

import jax
import jax.numpy as jnp


def func(x):
    return jnp.sum(jnp.cumsum(x) ** 2)


f_jit = jax.jit(func)
x = jnp.ones(10000)
f_jit(x).block_until_ready()
elapsed = timeit.timeit(lambda: f_jit(x).block_until_ready(), number=20)
