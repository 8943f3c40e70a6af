# source: https://github.com/jax-ml/jax/issues/2777
# pattern: the body of lax.scan is a lambda calling a helper that branches with Python `if` on the carry (traced)
# expect: flag JAX301
# family: control
# strictness: callgraph
# run: sample(3)
import jax
import jax.numpy as jnp


def inner_step(ra, rb):
    if jnp.sum(ra) > jnp.sum(rb):
        return rb, ra
    return ra, rb


def sample(n):
    ra = jnp.ones((8, 2))
    rb = jnp.zeros((8, 2))
    (ra, rb), _ = jax.lax.scan(lambda c, _: (inner_step(*c), None), (ra, rb), None, length=n)
    return ra
