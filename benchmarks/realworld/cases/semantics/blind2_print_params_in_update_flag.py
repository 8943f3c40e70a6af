# source: https://github.com/jax-ml/jax/issues/196
# pattern: `print('params', params)` inside a jitted optimiser update to inspect the parameters: it prints tracers, once, at trace time
# expect: flag JAX401
# family: semantics
# strictness: strict
# run: update(0, jnp.ones(3), jnp.ones(3))
import jax
import jax.numpy as jnp


def loss(params, batch):
    return jnp.sum((params - batch) ** 2)


@jax.jit
def update(i, params, batch):
    print("params", params)
    return params - 0.01 * jax.grad(loss)(params, batch)
