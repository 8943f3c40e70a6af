# source: https://github.com/google/brax/blob/HEAD/brax/envs/wrappers.py
# pattern: an env wrapper's step calls `self._check(action)`, which raises when `action.ndim`/`action.shape[-1]` is wrong; reached from a jitted rollout step, only static shape facts are tested
# expect: no-flag
# family: control
# strictness: callgraph
# run: rollout_step(ClipWrapper(3), jnp.zeros(3), jnp.ones(3))
from functools import partial

import jax
import jax.numpy as jnp


class ClipWrapper:
    def __init__(self, action_size):
        self.action_size = action_size

    def _check(self, action):
        if action.ndim != 1 or action.shape[-1] != self.action_size:
            raise ValueError(f"bad action shape {action.shape}")

    def step(self, state, action):
        self._check(action)
        return state + jnp.clip(action, -1.0, 1.0)


@partial(jax.jit, static_argnums=0)
def rollout_step(env, state, action):
    return env.step(state, action)
