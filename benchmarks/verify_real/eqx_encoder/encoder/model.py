import jax
import jax.numpy as jnp

from encoder.layers import Dense


def make_encoder(key, n_in, n_out):
    kw, _ = jax.random.split(key)
    return Dense(weight=jax.random.normal(kw, (n_out, n_in)) * 0.3, bias=jnp.zeros(n_out))


def encode_batch(layer, xs):
    return jax.vmap(layer)(xs)
