"""A large constant table captured by a jitted lookup, exercised by the script's __main__ block."""

import jax
import jax.numpy as jnp
import numpy as np

VOCAB = 1024
TABLE = jnp.asarray(np.random.RandomState(0).randn(VOCAB, VOCAB).astype(np.float32))


@jax.jit
def embed(ids, scale):
    return TABLE[ids] * scale


def encode(ids, scale=0.5):
    return embed(ids, scale).sum(axis=-1)


if __name__ == "__main__":
    ids = jnp.arange(8)
    print(encode(ids))
    print(encode(ids[::-1], scale=2.0))
