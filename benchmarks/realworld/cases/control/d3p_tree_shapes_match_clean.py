# source: https://github.com/DPBayes/d3p/blob/HEAD/tests/util.py
# pattern: `if not tree_reduce(lambda a, b: a and b, tree_map(lambda x, y: jnp.shape(x) == jnp.shape(y), a, b))` inside a jitted update: every leaf comparison is static
# expect: no-flag
# family: control
# strictness: hard
# run: append_batch({"a": jnp.ones((2,3))}, {"a": jnp.ones((1,3))})
import jax
import jax.numpy as jnp


def _tree_and_reduce(tree):
    return jax.tree_util.tree_reduce(lambda x, y: x and y, tree, True)


def same_shapes(a, b):
    matches = jax.tree_util.tree_map(lambda x, y: jnp.ndim(x) == jnp.ndim(y) and jnp.shape(x)[1:] == jnp.shape(y)[1:], a, b)
    return _tree_and_reduce(matches)


@jax.jit
def append_batch(buffer, batch):
    if not same_shapes(buffer, batch):
        raise ValueError("batch leaves must match the buffer's trailing shapes")
    return jax.tree_util.tree_map(lambda x, y: jnp.concatenate([x, y]), buffer, batch)
