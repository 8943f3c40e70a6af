# source: https://github.com/google/jaxopt/issues/221
# pattern: scipy.optimize.minimize calls an objective that builds eqx.filter_jit(lambda p: ...) on every evaluation
# expect: flag JAX202
# family: placement
# strictness: hard
# run: fit(np.ones(3))
import equinox as eqx
import jax.numpy as jnp
import numpy as np
import scipy.optimize


def loss(params, data):
    return jnp.sum((params - data) ** 2)


def fit(data):
    def objective(x):
        value = eqx.filter_jit(lambda p: loss(p, data))(jnp.asarray(x))
        return float(value)

    return scipy.optimize.minimize(objective, np.zeros(3), method="L-BFGS-B")
