from functools import cached_property

import jax
import jax.numpy as jnp

from stanza.dataclasses import dataclass, field


@dataclass
class LinearPolicy:
    gains: jax.Array
    horizon: int = field(default=10, pytree_node=False)

    @cached_property
    def gain_norm(self):
        return jnp.linalg.norm(self.gains)

    def __call__(self, obs):
        return -(self.gains @ obs) / self.gain_norm


@jax.jit
def rollout_action(policy, obs):
    return policy(obs)


def controller(policy: LinearPolicy):
    return jax.jit(lambda obs: policy(obs))
