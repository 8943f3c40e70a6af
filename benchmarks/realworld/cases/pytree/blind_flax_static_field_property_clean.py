# source: https://github.com/Arnaud15/house_prices_mlp/blob/HEAD/house_prices_mlp/train_state.py
# pattern: a flax struct.PyTreeNode train state with a `pytree_node=False` loss function field and a plain @property derived from its arrays; used inside a jitted step
# expect: no-flag
# family: pytree
# strictness: strict
# run: train_step(TrainState(jnp.ones(3), jnp.int32(0), lambda p, b: jnp.sum((p - b) ** 2)), jnp.zeros(3))
from typing import Callable

import jax
import jax.numpy as jnp
from flax import struct


class TrainState(struct.PyTreeNode):
    params: jax.Array
    step: jax.Array
    loss_fn: Callable = struct.field(pytree_node=False)

    @property
    def lr(self):
        return 0.1 / (1.0 + self.step)


@jax.jit
def train_step(state, batch):
    grads = jax.grad(state.loss_fn)(state.params, batch)
    return state.replace(params=state.params - state.lr * grads, step=state.step + 1)
