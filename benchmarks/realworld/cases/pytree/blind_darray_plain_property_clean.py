# source: https://github.com/carlesoctav/jx/blob/HEAD/jx/_darray.py
# pattern: a register_dataclass array wrapper with a static partition-spec field exposes plain @property accessors (no caching) and a jitted function branches on the static field
# expect: no-flag
# family: pytree
# strictness: strict
# run: scale(Darray(jnp.ones((2, 3))), 2.0)
from dataclasses import dataclass, field
from typing import Optional

import jax
import jax.numpy as jnp
import jax.tree_util as jtu


@jtu.register_dataclass
@dataclass
class Darray:
    value: jax.Array
    pspec: Optional[tuple] = field(metadata=dict(static=True), default=None)

    @property
    def ndim(self):
        return self.value.ndim

    @property
    def sharded(self):
        return self.pspec is not None


@jax.jit
def scale(d, s):
    if d.sharded or d.ndim > 2:
        return d
    return Darray(d.value * s, d.pspec)
