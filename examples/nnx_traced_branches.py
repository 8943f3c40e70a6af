"""The Flax NNX spelling of traced_branches.py: Python `if` and `while` on traced values inside
`@nnx.jit` crash with TracerBoolConversionError. A module's Python config (`model.gain_first`) is
static there, so branching on it is fine."""

import jax
import jax.numpy as jnp
from flax import nnx


class Clip(nnx.Module):
    def __init__(self, gain_first: bool = True):
        self.gain_first = gain_first  # Python config: static under nnx.jit
        self.gain = nnx.Param(jnp.ones(()))  # a Variable: traced under nnx.jit


@nnx.jit
def soft_clip(model: Clip, x: jax.Array) -> jax.Array:
    if model.gain_first:
        x = x * model.gain[...]
    if x > 1.0:
        return 1.0 + jnp.log(x)
    return x


@nnx.jit
def count_halvings(model: Clip, x: float) -> jax.Array:
    x = x * model.gain[...]
    steps = 0
    while x > 1.0:
        x = x / 2.0
        steps = steps + 1
    return steps
