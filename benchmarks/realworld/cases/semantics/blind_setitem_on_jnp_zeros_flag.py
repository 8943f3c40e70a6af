# source: https://github.com/sandialabs/WecOptTool/issues/427
# pattern: a jitted transfer-matrix builder allocates `jnp.zeros((n, n))` and fills blocks with `mat[i, :] = row`: JAX arrays are immutable (TypeError)
# expect: flag JAX403
# family: semantics
# strictness: strict
# run: transfer_mat(jnp.ones(3))
import jax
import jax.numpy as jnp


@jax.jit
def transfer_mat(row):
    n = row.shape[0]
    mat = jnp.zeros((n, n))
    for i in range(n):
        mat[i, :] = jnp.roll(row, i)
    return mat
