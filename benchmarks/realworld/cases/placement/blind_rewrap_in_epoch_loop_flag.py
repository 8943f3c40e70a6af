# source: https://github.com/patrick-kidger/equinox/issues/1141
# pattern: `step = jax.jit(update)` written inside the training `for` loop around a module-level update function: no recompile, but a new jitted wrapper is built and looked up every iteration
# expect: flag JAX203
# family: placement
# strictness: strict
# run: fit(jnp.ones(3), 4)
import jax
import jax.numpy as jnp


def update(params):
    return params - 0.1 * jax.grad(lambda p: jnp.sum(p**2))(params)


def fit(params, epochs):
    for _ in range(epochs):
        step = jax.jit(update)
        params = step(params)
    return params
