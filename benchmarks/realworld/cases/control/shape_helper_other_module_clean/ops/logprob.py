import jax
import jax.numpy as jnp

from ops.shapes import needs_promotion, num_batch_dims


@jax.jit
def normal_logprob(x, loc, scale):
    if needs_promotion(x, loc):
        nd = num_batch_dims(x, loc)
        loc = jnp.reshape(loc, (1,) * (nd - jnp.ndim(loc)) + jnp.shape(loc))
    return -0.5 * ((x - loc) / scale) ** 2 - jnp.log(scale)
