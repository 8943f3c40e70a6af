# source: https://github.com/dfm/tinygp/issues/85
# pattern: np.append (NumPy, not jnp) applied to leaves of a traced pytree inside a jitted conditioning function
# expect: flag JAX402
# family: semantics
# strictness: hard
# run: condition(jnp.arange(3.), 1.0)
import jax
import numpy as np


def shift_right(X):
    return jax.tree_util.tree_map(lambda x: np.append(x[0], x[:-1]), X)


@jax.jit
def condition(X, y):
    Xs = shift_right(X)
    return Xs, y
