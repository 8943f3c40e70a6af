# source: https://github.com/HuangYin0514/dynamics/blob/HEAD/LNN/ori_v1_1/t02.py
# pattern: `vfnc = jax.jit(jax.vmap(analytical_fn))` and a partial(jax.jit, backend=...) wrapper are built once at module level and called from functions
# expect: no-flag
# family: placement
# strictness: strict
# run: rollout(jnp.ones((4, 2)), 3)
from functools import partial

import jax
import jax.numpy as jnp


def analytical_fn(state):
    q, p = state[0], state[1]
    return jnp.stack([p, -jnp.sin(q)])


vfnc = jax.jit(jax.vmap(analytical_fn))
vnorm = partial(jax.jit, backend="cpu")(jax.vmap(jnp.linalg.norm))


def rollout(states, steps):
    for _ in range(steps):
        states = states + 0.01 * vfnc(states)
    return vnorm(states)
