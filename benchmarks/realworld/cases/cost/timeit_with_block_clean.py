# source: https://github.com/jax-ml/jax/issues/30245
# pattern: timeit.default_timer around run_loop_jit(...).block_until_ready()
# expect: no-flag
# family: cost
# strictness: strict
# run: (module-level code)
import timeit

import jax
import jax.numpy as jnp


def body_fn(step_i, x):
    return x + step_i


def run_loop(x, n):
    return jax.lax.fori_loop(0, n, body_fn, x)


run_loop_jit = jax.jit(run_loop)
x0 = jnp.array(0, dtype=jnp.int32)
run_loop_jit(x0, 1000000).block_until_ready()
start_time = timeit.default_timer()
res = run_loop_jit(x0, 1000000).block_until_ready()
print("took", timeit.default_timer() - start_time)
