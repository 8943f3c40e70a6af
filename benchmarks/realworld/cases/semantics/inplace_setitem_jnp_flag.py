# source: https://github.com/jax-ml/jax/issues/7032
# pattern: NumPy-style `xy[:, :2] = ...` item assignment on a jnp array inside a function that is jitted
# expect: flag JAX403
# family: semantics
# strictness: strict
# run: (module-level code)
import jax
import jax.numpy as jnp


def jx_warp(boxes, M, width):
    n = boxes.shape[0]
    xy = jnp.ones((n * 4, 3))
    xy[:, :2] = boxes[:, [0, 1, 2, 3, 0, 3, 2, 1]].reshape(n * 4, 2)
    xy = xy @ M.T
    return jnp.clip(xy[:, :2], 0, width)


warped = jax.jit(jx_warp)(jnp.ones((2, 4)), jnp.eye(3), 64.0)
