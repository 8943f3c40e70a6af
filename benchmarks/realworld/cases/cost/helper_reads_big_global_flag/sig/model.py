import jax
import jax.numpy as jnp

from sig.kernels import apply_kernel


@jax.jit
def response(x):
    return jnp.tanh(apply_kernel(x))
