# source: https://github.com/DPBayes/d3p/blob/HEAD/tests/util.py
# pattern: a Python loop over jax.tree_util.tree_leaves(grads) inside jit to clip by global norm: the number of leaves is static
# expect: no-flag
# family: control
# strictness: strict
# run: clip_by_global_norm({"w": jnp.ones((2, 2)), "b": jnp.ones(2)}, 1.0)
import jax
import jax.numpy as jnp


@jax.jit
def clip_by_global_norm(grads, max_norm):
    total = 0.0
    for leaf in jax.tree_util.tree_leaves(grads):
        total = total + jnp.sum(leaf**2)
    scale = jnp.minimum(1.0, max_norm / jnp.sqrt(total))
    return jax.tree_util.tree_map(lambda g: g * scale, grads)
