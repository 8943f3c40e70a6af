# source: https://github.com/jax-ml/jax/issues/16611
# pattern: the same 1000-step rollout written with lax.fori_loop: one copy of the body, trip count in the loop primitive
# expect: no-flag
# family: cost
# strictness: strict
# run: rollout(jnp.ones(3), jnp.ones((1000, 3)))
import jax
import jax.numpy as jnp

HORIZON = 1000


def dynamics(state, action):
    return 0.99 * state + 0.01 * jnp.tanh(action)


@jax.jit
def rollout(state, actions):
    return jax.lax.fori_loop(0, HORIZON, lambda i, s: dynamics(s, actions[i]), state)
