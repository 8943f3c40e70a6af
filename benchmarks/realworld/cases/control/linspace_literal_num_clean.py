# source: https://github.com/jax-ml/jax/issues/5208
# pattern: grid1 of the thread: the step count is a Python int literal, so linspace's num is static inside jit
# expect: no-flag
# family: control
# strictness: strict
# run: grid1()
import jax
import jax.numpy as jnp


@jax.jit
def grid1():
    t0, tf, num_steps = 0.0, 1.0, 10
    return jnp.linspace(t0, tf, num_steps + 1)
