# source: https://github.com/pyro-ppl/numpyro/blob/00682dae4b1f69d57c09879be5fb32f11d8bba88/numpyro/distributions/util.py
# pattern: `shape = shape or lax.broadcast_shapes(jnp.shape(p), jnp.shape(n))` inside jit: both operands of `or` are static tuples
# expect: no-flag
# family: control
# strictness: hard
# run: _binomial(key, jnp.full((3,), .5), jnp.array(4.), ())
from functools import partial

import jax.numpy as jnp
from jax import jit, lax, random


@partial(jit, static_argnums=(3,))
def _binomial(key, p, n, shape):
    shape = shape or lax.broadcast_shapes(jnp.shape(p), jnp.shape(n))
    p = jnp.reshape(jnp.broadcast_to(p, shape), -1)
    n = jnp.reshape(jnp.broadcast_to(n, shape), -1)
    keys = random.split(key, jnp.size(p))
    draws = random.uniform(keys[0], (p.shape[0],))
    return jnp.reshape(jnp.floor(draws * n * p), shape)
