"""A Flax NNX training script as Flax's documentation teaches it, with three bugs: `nnx.jit` of a
new partial made inside the loop (one compile per step), a Python `if` on the traced loss inside
`@nnx.jit` (TracerBoolConversionError), and a training loop timed without waiting for the result
(JAX dispatches asynchronously, so the clock measures the dispatch only)."""

import time
from functools import partial

import jax
import jax.numpy as jnp
import optax
from flax import nnx


class MLP(nnx.Module):
    def __init__(self, din: int, dout: int, *, rngs: nnx.Rngs):
        self.linear = nnx.Linear(din, dout, rngs=rngs)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.linear(x)


def loss_fn(model: MLP, x: jax.Array, y: jax.Array, scale) -> jax.Array:
    return scale * jnp.mean((model(x) - y) ** 2)


@nnx.jit
def train_step(model: MLP, optimizer: nnx.Optimizer, x: jax.Array, y: jax.Array) -> jax.Array:
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y, 1.0)
    optimizer.update(model, grads)
    if loss > 10.0:
        loss = loss / 2
    return loss


def evaluate(model: MLP, x: jax.Array, y: jax.Array, steps: int = 5) -> list:
    losses = []
    for step in range(steps):
        losses.append(nnx.jit(partial(loss_fn, scale=1.0 + step))(model, x, y))
    return losses


def train(steps: int = 5) -> float:
    model = MLP(4, 1, rngs=nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
    x = jnp.ones((8, 4))
    y = jnp.zeros((8, 1))
    start = time.perf_counter()
    for _ in range(steps):
        loss = train_step(model, optimizer, x, y)
    print(f"{steps} steps in {time.perf_counter() - start:.4f}s, loss {float(loss):.4f}")
    return float(loss)


if __name__ == "__main__":
    train()
