# source: https://github.com/brentyi/jax_dataclasses
# pattern: a frozen, unregistered config dataclass (hashable, passed as a static argument) caches a NumPy node table with cached_property: it is not a pytree, the cache holds concrete NumPy data
# expect: no-flag
# family: pytree
# strictness: strict
# run: interpolate(jnp.linspace(0.0, 1.0, 5), GridConfig(8, 0.25))
import dataclasses
import functools
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


@dataclasses.dataclass(frozen=True)
class GridConfig:
    n: int
    spacing: float

    @functools.cached_property
    def nodes(self):
        return np.arange(self.n) * self.spacing


@partial(jax.jit, static_argnames=("cfg",))
def interpolate(values, cfg):
    return jnp.interp(values, cfg.nodes, np.sin(cfg.nodes))
