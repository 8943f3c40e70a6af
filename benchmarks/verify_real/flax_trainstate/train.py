"""A flax linen regression script in the shape of the flax guides: a `TrainState` subclass with an
optional gradient-clipping setting, a jitted `train_step`, an evaluation loop, and a `__main__`
block. The state holds optax's closures and `model.apply`, so its calls cannot be recorded: the
verification re-runs the script in each version instead."""

from typing import Optional

import jax
import jax.numpy as jnp
import optax
from flax import linen as nn
from flax.training import train_state


class MLP(nn.Module):
    hidden: int = 16

    @nn.compact
    def __call__(self, x):
        return nn.Dense(1)(nn.tanh(nn.Dense(self.hidden)(x)))


class TrainState(train_state.TrainState):
    max_grad: Optional[float] = None


def create_state(key, lr, max_grad=None):
    model = MLP()
    params = model.init(key, jnp.ones((1, 3)))
    return TrainState.create(apply_fn=model.apply, params=params, tx=optax.sgd(lr), max_grad=max_grad)


@jax.jit
def train_step(state, x, y):
    def loss_fn(params):
        return jnp.mean((state.apply_fn(params, x)[:, 0] - y) ** 2)

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    norm = optax.global_norm(grads)
    if norm > state.max_grad:  # traced: raises under jit
        grads = jax.tree_util.tree_map(lambda g: g * state.max_grad / norm, grads)
    return state.apply_gradients(grads=grads), loss


def evaluate(state, batches):
    total = 0.0
    for x, y in batches:
        pred = jax.jit(state.apply_fn)(state.params, x)  # re-wrapped for every batch
        total += float(jnp.mean((pred[:, 0] - y) ** 2))
    return total / len(batches)


if __name__ == "__main__":
    key = jax.random.PRNGKey(0)
    xs = jax.random.normal(key, (6, 16, 3))
    ys = jnp.sin(xs).sum(-1)
    state = create_state(key, 0.1, max_grad=0.5)
    for step in range(6):
        state, loss = train_step(state, xs[step], ys[step])
    print("eval", evaluate(state, list(zip(xs, ys))))
