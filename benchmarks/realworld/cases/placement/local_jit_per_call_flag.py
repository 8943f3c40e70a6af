# source: https://github.com/jax-ml/jax/issues/2251
# pattern: a @partial(jit, static_argnums) function defined inside the public function: a new function object, so a new compile, on every call
# expect: flag JAX202
# family: placement
# strictness: strict
# run: pandemic_scan(jnp.ones(2))
import functools

import jax.numpy as jnp
from jax import jit, lax


def infect(state, step):
    return state * 1.01 + step, state


def pandemic_scan(state, step=1, t=0, T=5):
    @functools.partial(jit, static_argnums=(1, 2, 3))
    def _pandemic_scan(state, step, t, T):
        return lax.scan(infect, state, jnp.full(T, step))

    return _pandemic_scan(state, step, t, T)
