import jax.numpy as jnp
import numpy as np

BIGMAT = jnp.asarray(np.random.random((1000, 1000)))


def apply_kernel(x):
    return BIGMAT @ x
