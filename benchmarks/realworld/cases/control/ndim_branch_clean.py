# source: https://github.com/patrick-kidger/equinox/blob/HEAD/equinox/_misc.py
# pattern: left_broadcast_to-style helper inside jit: `if arr.ndim < len(shape)` and reshape by tuple arithmetic on arr.shape: static
# expect: no-flag
# family: control
# strictness: strict
# run: left_broadcast(jnp.ones(3), jnp.ones((3,2)))
import jax
import jax.numpy as jnp


@jax.jit
def left_broadcast(arr, target):
    shape = target.shape
    if arr.ndim < len(shape):
        arr = arr.reshape(arr.shape + (1,) * (len(shape) - arr.ndim))
    return jnp.broadcast_to(arr, shape)
