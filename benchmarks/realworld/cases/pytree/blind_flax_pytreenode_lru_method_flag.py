# source: https://github.com/Arnaud15/house_prices_mlp/blob/HEAD/house_prices_mlp/train_state.py
# pattern: a flax struct.PyTreeNode train state (a pytree dataclass) memoises a per-step learning-rate table with functools.lru_cache on a method called from the jitted step
# expect: flag JAX102
# family: pytree
# strictness: strict
import functools
from typing import Callable

import jax
import jax.numpy as jnp
from flax import struct


class TrainState(struct.PyTreeNode):
    params: jax.Array
    step: jax.Array
    loss_fn: Callable = struct.field(pytree_node=False)

    @functools.lru_cache(maxsize=8)
    def lr_table(self, n):
        return 0.1 * jnp.exp(-jnp.arange(n) / n) * (1 + self.step)


@jax.jit
def train_step(state, batch):
    grads = jax.grad(state.loss_fn)(state.params, batch)
    lr = state.lr_table(16)[0]
    return state.replace(params=state.params - lr * grads, step=state.step + 1)
