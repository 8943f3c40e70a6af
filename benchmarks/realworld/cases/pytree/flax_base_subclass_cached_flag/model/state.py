from functools import cached_property

import jax
import jax.numpy as jnp

from model.base import SampledState


class MCState(SampledState):
    @cached_property
    def acceptance(self):
        return self.n_accepted / self.samples.shape[0]


@jax.jit
def report(state):
    return state.acceptance * jnp.mean(state.samples)


def reporter(state: MCState):
    return jax.jit(lambda scale: scale * state.acceptance)
