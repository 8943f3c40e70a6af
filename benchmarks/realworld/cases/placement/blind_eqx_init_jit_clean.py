# source: https://github.com/patrick-kidger/equinox/issues/686
# pattern: an eqx.Module stores `jax.jit(fk_fn)` in __init__ (once per instance) and the training step is a module-level eqx.filter_jit: no per-call wrapper
# expect: no-flag
# family: placement
# strictness: strict
# run: step(Trajectory(jnp.sin), jnp.ones(3))
import equinox as eqx
import jax
import jax.numpy as jnp
from typing import Callable


class Trajectory(eqx.Module):
    scale: jax.Array
    forward: Callable

    def __init__(self, fk_fn):
        self.scale = jnp.ones(3)
        self.forward = jax.jit(fk_fn)

    def __call__(self, x):
        return self.forward(self.scale * x)


@eqx.filter_jit
def step(model, x):
    return jnp.mean(model(x) ** 2)
