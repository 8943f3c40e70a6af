# source: https://github.com/jax-ml/jax/pull/16430
# pattern: inside jit, `if key is None:` on an optional argument and `if len(xs) == 0` on a Python list of arrays: both static
# expect: no-flag
# family: control
# strictness: strict
# run: mix([jnp.ones(2), jnp.ones(2)])
import jax
import jax.numpy as jnp


@jax.jit
def mix(xs, weights=None):
    if len(xs) == 0:
        return jnp.zeros(())
    if weights is None:
        weights = jnp.ones(len(xs)) / len(xs)
    return sum(w * x for w, x in zip(weights, xs))
