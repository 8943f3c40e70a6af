# source: https://github.com/jax-ml/jax/issues/2777
# pattern: a short Python loop (num_obs = 8) and a list comprehension building a small constant inside jit: unrolling is cheap and intended
# expect: no-flag
# family: cost
# strictness: strict
# run: init_state(key)
import jax
import jax.numpy as jnp

num_obs = 8


@jax.jit
def init_state(key):
    ra = jnp.array([[1.0, 0.0] for _ in range(num_obs)])
    for _ in range(3):
        key, shard = jax.random.split(key)
        ra = ra * jax.random.uniform(shard, ra.shape)
    return ra
