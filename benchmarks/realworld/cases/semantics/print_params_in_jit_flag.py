# source: https://github.com/jax-ml/jax/issues/196
# pattern: print() of traced parameters inside a @jit update step (prints Traced<ShapedArray> once, at trace time)
# expect: flag JAX401
# family: semantics
# strictness: strict
# run: update(0, jnp.ones(2), (jnp.ones((3, 2)), jnp.ones(3)))
import jax
import jax.numpy as jnp
from jax import grad, jit


def loss(params, batch):
    x, y = batch
    return jnp.mean((x @ params - y) ** 2)


@jit
def update(i, params, batch):
    print("params", params)
    return params - 0.01 * grad(loss)(params, batch)
