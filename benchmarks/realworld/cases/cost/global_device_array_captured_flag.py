# source: https://github.com/jax-ml/jax/issues/10596
# pattern: a jitted fft reads a module-level device array of 8000 elements (below the rule's default size) that XLA constant-folds: 10 s compiles on GPU in the thread
# expect: flag JAX503
# family: cost
# strictness: hard
# run: (module-level code)
import jax
import jax.numpy as jnp
import numpy as np

pulse = jax.device_put(np.random.rand(8000))


def f():
    return jnp.fft.fft(pulse)


a = jax.jit(f)()
