# source: https://github.com/jax-ml/jax/issues/15761
# pattern: inside @jax.jit, `jnp.zeros(len(indices))` and `for idx, j in enumerate(indices)` over a traced index array: len() and iteration use the static shape; `vec[j]` with traced j is a gather
# expect: no-flag
# family: control
# strictness: strict
# run: gather(jnp.ones(20), jnp.arange(5))
import jax
import jax.numpy as jnp


@jax.jit
def gather(vec, indices):
    out = jnp.zeros(len(indices))
    for idx, j in enumerate(indices):
        out = out.at[idx].set(vec[j])
    return out
