# source: https://github.com/jax-ml/jax/issues/2251
# pattern: the thread's fix: the jitted private function lives at module level; the public wrapper only calls it
# expect: no-flag
# family: placement
# strictness: strict
# run: pandemic_scan(jnp.ones(2))
import functools

import jax.numpy as jnp
from jax import jit, lax


def infect(state, step):
    return state * 1.01 + step, state


@functools.partial(jit, static_argnums=(1, 2, 3))
def _pandemic_scan(state, step, t, T):
    return lax.scan(infect, state, jnp.full(T, step))


def pandemic_scan(state, step=1, t=0, T=5):
    return _pandemic_scan(state, step, t, T)
