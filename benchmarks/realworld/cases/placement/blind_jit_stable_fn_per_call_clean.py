# source: https://github.com/jax-ml/jax/issues/2515
# pattern: a helper returns `jit(_neg_loglik)(...)` around a module-level function: the function object is stable, jit's cache hits on every call after the first; only a cheap wrapper is rebuilt
# expect: no-flag
# family: placement
# strictness: strict
# run: (module-level code)
import jax
import jax.numpy as jnp
import numpy as np


def _neg_loglik(sigma, mu, data):
    return jnp.sum(jnp.log(sigma) + 0.5 * ((data - mu) / sigma) ** 2)


def loglik(pars, data):
    return jax.jit(_neg_loglik)(pars[0], pars[1], data)


data = jnp.asarray(np.random.default_rng(0).normal(100.0, 5.0, 50))
values = [loglik((s, m), data) for s, m in [(5.0, 100.0), (5.5, 101.0)]]
