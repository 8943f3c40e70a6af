# source: https://github.com/jax-ml/jax/issues/28816
# pattern: a timing helper jits the callable it is given once, warms it up, then calls the same jitted object many times
# expect: no-flag
# family: placement
# strictness: strict
# run: mytime(solve, iterations=2)
import time

import jax
import jax.numpy as jnp


def mytime(fn, msg="", iterations=30):
    fn = jax.jit(fn)
    out = fn()
    jax.block_until_ready(out)
    start = time.perf_counter()
    rs = [fn() for _ in range(iterations)]
    jax.block_until_ready(rs)
    print(msg, time.perf_counter() - start)
    return rs[-1]


def solve():
    k = jnp.eye(128)[None].repeat(10, 0)
    return jnp.linalg.solve(k, jnp.ones(128))
