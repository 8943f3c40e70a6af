# source: https://github.com/pyro-ppl/numpyro/blob/00682dae4b1f69d57c09879be5fb32f11d8bba88/numpyro/distributions/util.py
# pattern: the traced decision is already a lax.cond (and jnp.where); Python only builds the branch functions
# expect: no-flag
# family: control
# strictness: strict
# run: dispatch(key, jnp.asarray(0.3), jnp.asarray(20.0))
import jax
import jax.numpy as jnp
from jax import lax

_mu_thresh = 10


def _small(args):
    key, p, n = args
    return jnp.sum(jax.random.bernoulli(key, p, (32,))[: 10]) * 1.0


def _large(args):
    key, p, n = args
    return jnp.floor(n * p + jnp.sqrt(n * p * (1 - p)) * jax.random.normal(key))


@jax.jit
def dispatch(key, p, n):
    is_le_mid = p <= 0.5
    pq = jnp.where(is_le_mid, p, 1 - p)
    k = lax.cond(n * pq < _mu_thresh, _small, _large, (key, pq, n))
    return jnp.where(is_le_mid, k, n - k)
