# source: https://github.com/pyro-ppl/numpyro/issues/2000
# pattern: functools.lru_cache on a module-level function keyed by static ints, called at trace time to build a constant table
# expect: no-flag
# family: pytree
# strictness: strict
# run: tril_vec(jnp.ones((3,3)))
import functools

import jax
import jax.numpy as jnp
import numpy as np


@functools.lru_cache(maxsize=None)
def tril_indices(n, k):
    return np.tril_indices(n, k)


@jax.jit
def tril_vec(x):
    rows, cols = tril_indices(x.shape[-1], 0)
    return x[..., rows, cols]
