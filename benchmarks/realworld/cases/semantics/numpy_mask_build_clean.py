# source: https://github.com/jax-ml/jax/issues/101
# pattern: a mutable original-NumPy array built by item assignment from static sizes at trace time, then used as a constant mask
# expect: no-flag
# family: semantics
# strictness: hard
# run: band_mask(jnp.ones((4,4)))
import jax
import jax.numpy as jnp
import numpy as onp


@jax.jit
def band_mask(x):
    n = x.shape[-1]
    mask = onp.zeros((n, n), dtype=bool)
    for i in range(n):
        mask[i, max(0, i - 1) : i + 2] = True
    return jnp.where(mask, x, 0.0)
