# source: https://github.com/gbionics/jaxsim/pull/344
# pattern: benchmark wraps the jitted call in jax.block_until_ready(...) inside the timed region
# expect: no-flag
# family: cost
# strictness: strict
# run: bench(4, repeats=2)
import time

import jax
import jax.numpy as jnp


@jax.jit
def forward_dynamics(q, dq):
    return -jnp.sin(q) - 0.1 * dq


def bench(batch, repeats=20):
    keys = jax.random.split(jax.random.PRNGKey(0), repeats)
    total = 0.0
    for key in keys:
        q = jax.random.normal(key, (batch,))
        start = time.perf_counter()
        jax.block_until_ready(forward_dynamics(q, q))
        total += time.perf_counter() - start
    return total / repeats
