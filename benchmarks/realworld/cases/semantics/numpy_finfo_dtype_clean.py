# source: https://github.com/pyro-ppl/numpyro/blob/00682dae4b1f69d57c09879be5fb32f11d8bba88/numpyro/distributions/util.py
# pattern: jnp.finfo(t.dtype).eps and math.sqrt(t.shape[-1]) inside traced code: dtype and shape queries are static
# expect: no-flag
# family: semantics
# strictness: strict
# run: stick_breaking(jnp.ones(3)*.1)
import math

import jax
import jax.numpy as jnp


@jax.jit
def stick_breaking(t):
    eps = jnp.finfo(t.dtype).eps
    n = round((math.sqrt(1 + 8 * t.shape[-1]) - 1) / 2)
    t = jnp.clip(t, -1 + eps, 1 - eps)
    return jnp.zeros((n, n)).at[jnp.tril_indices(n, -1)].set(t[: n * (n - 1) // 2])
