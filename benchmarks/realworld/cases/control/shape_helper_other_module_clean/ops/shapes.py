import jax.numpy as jnp
from jax import lax


def num_batch_dims(*args, shape=()):
    shapes = [jnp.shape(arg) for arg in args]
    return len(lax.broadcast_shapes(shape, *shapes))


def needs_promotion(x, y):
    return jnp.ndim(x) != jnp.ndim(y)
