# source: https://github.com/jax-ml/jax/issues/1832
# pattern: `timeit.timeit(lambda: f_jit(x), number=...)` around a jitted function: each timed call only dispatches, nothing waits for the result
# expect: flag JAX501
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
f_jit(x)
elapsed = timeit.timeit(lambda: f_jit(x), number=20)
