# source: https://github.com/kokabsc/gwkokab/issues/112
# pattern: inference timing that calls `jax.block_until_ready(out)` on the jitted result before reading the clock again
# expect: no-flag
# family: cost
# strictness: strict
# run: time_inference(jnp.ones((64, 64)))
import time

import jax
import jax.numpy as jnp


@jax.jit
def infer(x):
    return jnp.tanh(x @ x.T).sum(axis=0)


def time_inference(x, repeats=3):
    infer(x).block_until_ready()
    t0 = time.perf_counter()
    for _ in range(repeats):
        out = infer(x)
    jax.block_until_ready(out)
    return (time.perf_counter() - t0) / repeats
