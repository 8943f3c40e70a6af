# source: https://github.com/jax-ml/jax/issues/2777
# pattern: Python `for _ in range(n)` where n is a traced (non-static) argument of a jitted sampler
# expect: flag JAX303
# family: control
# strictness: strict
# run: sample(key, 3)
import jax
import jax.numpy as jnp


def inner_step(key, ra, rb):
    key, shard = jax.random.split(key)
    gate = jax.random.uniform(shard, ra.shape)
    return key, 0.5 * (ra + gate * rb), 0.5 * (rb + gate * ra)


@jax.jit
def sample(key, n):
    ra = jnp.ones((8, 2))
    rb = jnp.zeros((8, 2))
    for _ in range(n):
        key, ra, rb = inner_step(key, ra, rb)
    return ra
