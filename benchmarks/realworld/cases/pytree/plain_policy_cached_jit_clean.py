# source: https://github.com/Physical-Intelligence/openpi/pull/550
# pattern: a plain (non-pytree) Policy object caches its jitted sampler in a functools.cached_property and calls it per request
# expect: no-flag
# family: pytree
# strictness: strict
# run: Policy(jnp.ones(3)).infer(jnp.ones(3))
from functools import cached_property

import jax
import jax.numpy as jnp


def sample_actions(params, obs, temperature):
    return jnp.tanh(params * obs) / temperature


class Policy:
    def __init__(self, params, temperature=1.0):
        self._params = params
        self._temperature = temperature

    @cached_property
    def _sample_actions(self):
        return jax.jit(sample_actions)

    def infer(self, obs):
        return self._sample_actions(self._params, obs, self._temperature)
