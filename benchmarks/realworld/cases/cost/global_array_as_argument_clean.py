# source: https://github.com/jax-ml/jax/issues/10596
# pattern: the thread's fix: the array is passed as an argument of the jitted function instead of read from module scope
# expect: no-flag
# family: cost
# strictness: strict
# run: (module-level code)
import jax
import jax.numpy as jnp
import numpy as np

pulse = jax.device_put(np.random.rand(10000))


def f(pulse):
    return jnp.fft.fft(pulse)


a = jax.jit(f)(pulse)
