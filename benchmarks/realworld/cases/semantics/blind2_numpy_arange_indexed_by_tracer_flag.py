# source: https://github.com/jax-ml/jax/issues/553
# pattern: `np.arange(x.shape[0])[x]` with `numpy` imported as np inside a jitted function: the NumPy array is indexed with a traced integer array, which NumPy tries to convert
# expect: flag JAX402
# family: semantics
# strictness: strict
# run: lookup(jnp.array([0, 1, 2], dtype=jnp.int32))
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def lookup(x):
    r = np.arange(x.shape[0])[x]
    return r
