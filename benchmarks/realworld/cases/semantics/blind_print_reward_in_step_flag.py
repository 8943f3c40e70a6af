# source: https://github.com/google-deepmind/mujoco/issues/1373
# pattern: `print("reward", reward)` inside a jitted env step to debug values: it runs once, at trace time, and prints a DynamicJaxprTracer instead of numbers
# expect: flag JAX401
# family: semantics
# strictness: strict
# run: env_step(jnp.zeros(3), jnp.ones(3))
import jax
import jax.numpy as jnp


@jax.jit
def env_step(qpos, action):
    qpos = qpos + 0.01 * action
    reward = -jnp.sum(qpos**2)
    print("reward", reward)
    return qpos, reward
