# source: https://github.com/jax-ml/jax/pull/24315
# pattern: the functional update the error message recommends: x = x.at[idx].set(y) inside jit
# expect: no-flag
# family: semantics
# strictness: strict
# run: scatter_rows(jnp.zeros((3,2)), 1, jnp.ones(2))
import jax
import jax.numpy as jnp


@jax.jit
def scatter_rows(x, idx, rows):
    x = x.at[idx].set(rows)
    x = x.at[0].add(1.0)
    return x
