# source: https://github.com/jax-ml/jax/issues/1223
# pattern: autoregressive sampling of an 8x8x3 image as three nested static Python loops inside jit: 192 unrolled copies of the per-pixel body
# expect: flag JAX502
# family: cost
# strictness: hard
import jax
import jax.numpy as jnp


@jax.jit
def sample(key, logits_w):
    img = jnp.zeros((8, 8, 3))
    for c in range(3):
        for i in range(8):
            for j in range(8):
                key, sub = jax.random.split(key)
                logit = jnp.sum(img * logits_w[c]) + i - j
                img = img.at[i, j, c].set(jax.random.bernoulli(sub, jax.nn.sigmoid(logit)))
    return img
