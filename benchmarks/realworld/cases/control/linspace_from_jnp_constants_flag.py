# source: https://github.com/jax-ml/jax/issues/5208
# pattern: the step count is computed with jnp.maximum/jnp.abs from Python constants inside jit, which makes it a tracer, then used as linspace's num
# expect: flag JAX307
# family: control
# strictness: hard
# run: grid2()
import jax
import jax.numpy as jnp


@jax.jit
def grid2():
    t0, tf, dt = 0.0, 1.0, 1e-1
    num_steps = jnp.maximum(jnp.abs((tf - t0) / dt), 1)
    return jnp.linspace(t0, tf, num_steps + 1)
