# source: https://github.com/pyro-ppl/numpyro/blob/00682dae4b1f69d57c09879be5fb32f11d8bba88/numpyro/distributions/util.py
# pattern: `if jax.default_backend() == "cpu":` chooses lax.map or vmap inside a jitted sampler: a static, trace-time choice
# expect: no-flag
# family: control
# strictness: strict
# run: _bernoulli(key, jnp.asarray(.5), (3,))
from functools import partial

import jax
import jax.numpy as jnp
from jax import jit, lax, vmap


def _dispatch(key, p):
    return jax.random.bernoulli(key, p).astype(jnp.int32)


@partial(jit, static_argnums=(2,))
def _bernoulli(key, p, shape):
    p = jnp.reshape(jnp.broadcast_to(p, shape), -1)
    keys = jax.random.split(key, jnp.size(p))
    if jax.default_backend() == "cpu":
        ret = lax.map(lambda x: _dispatch(*x), (keys, p))
    else:
        ret = vmap(_dispatch)(keys, p)
    return jnp.reshape(ret, shape)
