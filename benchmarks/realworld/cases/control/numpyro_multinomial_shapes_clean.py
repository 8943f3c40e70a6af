# source: https://github.com/pyro-ppl/numpyro/blob/00682dae4b1f69d57c09879be5fb32f11d8bba88/numpyro/distributions/util.py
# pattern: inside jit: `if jnp.shape(n) != jnp.shape(p)[:-1]` with lax.broadcast_shapes, `if jnp.ndim(n) > 0`, `if n_max == 0` on a static arg: all static
# expect: no-flag
# family: control
# strictness: hard
# run: _multinomial(key, jnp.ones((2,3))/3, jnp.array([2,3]), 3, ())
from functools import partial

import jax.numpy as jnp
from jax import jit, lax, random


@partial(jit, static_argnums=(3, 4))
def _multinomial(key, p, n, n_max, shape=()):
    if jnp.shape(n) != jnp.shape(p)[:-1]:
        broadcast_shape = lax.broadcast_shapes(jnp.shape(n), jnp.shape(p)[:-1])
        n = jnp.broadcast_to(n, broadcast_shape)
        p = jnp.broadcast_to(p, broadcast_shape + jnp.shape(p)[-1:])
    shape = shape or p.shape[:-1]
    if n_max == 0:
        return jnp.zeros(shape + p.shape[-1:], dtype=jnp.result_type(int))
    idx = random.categorical(key, jnp.log(p), shape=(n_max,) + shape)
    if jnp.ndim(n) > 0:
        mask = (jnp.arange(n_max)[:, None] < n).astype(idx.dtype)
    else:
        mask = 1
    return jnp.sum(jax_one_hot(idx * mask, p.shape[-1]), axis=0)


def jax_one_hot(i, k):
    return (i[..., None] == jnp.arange(k)).astype(jnp.int32)
