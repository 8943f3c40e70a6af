# source: https://github.com/jax-ml/jax/issues/553
# pattern: NumPy on static metadata inside jit: np.prod(x.shape), np.arange(x.shape[0]) used only to build a static permutation
# expect: no-flag
# family: semantics
# strictness: strict
# run: flatten_and_reverse(jnp.ones((3,2)))
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def flatten_and_reverse(x):
    n = int(np.prod(x.shape))
    order = np.arange(x.shape[0])[::-1]
    return jnp.reshape(x[order], (n,))
