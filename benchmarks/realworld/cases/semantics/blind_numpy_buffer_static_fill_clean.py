# source: https://github.com/sandialabs/WecOptTool/issues/427
# pattern: inside jit, a NumPy buffer is filled by item assignment with static Python numbers only, then converted once with jnp.asarray and multiplied by the traced input
# expect: no-flag
# family: semantics
# strictness: strict
# run: apply_stencil(jnp.ones(4))
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def apply_stencil(x):
    n = x.shape[0]
    mat = np.zeros((n, n))
    for i in range(n):
        mat[i, i] = -2.0
        if i + 1 < n:
            mat[i, i + 1] = mat[i + 1, i] = 1.0
    return jnp.asarray(mat) @ x
