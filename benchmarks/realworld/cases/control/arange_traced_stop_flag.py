# source: https://github.com/jax-ml/jax/issues/5186
# pattern: jnp.arange with a stop taken from a traced argument of a jitted function
# expect: flag JAX307
# family: control
# strictness: strict
# run: (module-level code)
import jax
import jax.numpy as jnp


def ramp(n):
    return jnp.arange(0, n, 1)


ramp_jit = jax.jit(ramp)
print(ramp_jit(5))
