# source: https://github.com/jax-ml/jax/issues/2515
# pattern: a likelihood-gradient helper returns `jit(grad(_neg_loglik))(...)`: grad builds a new function object on every call, so each call of the helper (from a fitting loop) traces and compiles again
# expect: flag JAX202
# family: placement
# strictness: strict
# run: (module-level code)
import jax
import jax.numpy as jnp
import numpy as np


def _neg_loglik(sigma, mu, data):
    return jnp.sum(jnp.log(sigma) + 0.5 * ((data - mu) / sigma) ** 2)


def loglik_grad(pars, data):
    return jax.jit(jax.grad(_neg_loglik))(pars[0], pars[1], data)


data = jnp.asarray(np.random.default_rng(0).normal(100.0, 5.0, 50))
for sigma, mu in [(5.0, 100.0), (5.5, 101.0), (4.5, 99.0)]:
    g = loglik_grad((sigma, mu), data)
