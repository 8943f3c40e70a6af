# source: https://github.com/foundry-ai/foundry/blob/HEAD/src/stanza/dataclasses.py
# pattern: a jax.tree_util.register_dataclass pytree with a @staticmethod lru_cache keyed only by ints (not by self) and a plain @property
# expect: no-flag
# family: pytree
# strictness: hard
# run: features(Basis(jnp.ones(4)), jnp.ones(3))
import dataclasses
import functools

import jax
import jax.numpy as jnp
import numpy as np


@jax.tree_util.register_dataclass
@dataclasses.dataclass(frozen=True)
class Basis:
    weights: jax.Array

    @staticmethod
    @functools.lru_cache(maxsize=None)
    def exponents(n):
        return tuple(np.arange(n))

    @property
    def order(self):
        return self.weights.shape[0]


@jax.jit
def features(basis, x):
    powers = jnp.asarray(Basis.exponents(basis.order))
    return (x[:, None] ** powers) @ basis.weights
