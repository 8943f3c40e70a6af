# source: https://github.com/jax-ml/jax/issues/16611
# pattern: a jitted rollout applies the dynamics in a Python `for i in range(1000)` loop over a static horizon: 1000 copies of the body are traced and compiled
# expect: flag JAX502
# family: cost
# strictness: strict
import jax
import jax.numpy as jnp

HORIZON = 1000


def dynamics(state, action):
    return 0.99 * state + 0.01 * jnp.tanh(action)


@jax.jit
def rollout(state, actions):
    for i in range(HORIZON):
        state = dynamics(state, actions[i])
    return state
