"""Evaluation of a small VAE decoder: batched decoding and a per-call reconstruction metric."""

from functools import partial

import jax
import jax.numpy as jnp


def init_decoder(key, latent=2, hidden=8, out=4):
    k1, k2 = jax.random.split(key)
    return {"w1": jax.random.normal(k1, (latent, hidden)) * 0.3, "w2": jax.random.normal(k2, (hidden, out)) * 0.3}


def decode(params, z):
    return jax.nn.sigmoid(jnp.tanh(z @ params["w1"]) @ params["w2"])


def reconstruction_error(x, x_hat, reduction: str = "mean"):
    err = (x - x_hat) ** 2
    return jax.jit(lambda e: jnp.mean(e) if reduction == "mean" else jnp.sum(e))(err)


def evaluate(params, latents, targets):
    errors = []
    for z, x in zip(latents, targets):
        x_hat = jax.jit(jax.vmap(partial(decode, params)))(z)
        errors.append(reconstruction_error(x, x_hat))
    return jnp.stack(errors)
