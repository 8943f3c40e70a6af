"""Learning-rate schedules driven by a NamedTuple of hyper-parameters."""

from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp


class Warmup(NamedTuple):
    peak: float
    warmup_steps: int
    floor: float = 1e-4


@jax.jit
def warmup_lr(step: jax.Array, hp: Warmup):
    if step < hp.warmup_steps:
        return hp.peak * (step + 1) / hp.warmup_steps
    return jnp.maximum(hp.peak * 0.5 ** ((step - hp.warmup_steps) / 10.0), hp.floor)


@jax.jit
def steps_to_floor(lr: float, decay: float, floor: Optional[float] = None):
    floor = 1e-3 if floor is None else floor
    n = 0
    while lr > floor:
        lr = lr * decay
        n = n + 1
    return n
