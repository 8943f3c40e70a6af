# source: https://github.com/PlasmaControl/DESC/pull/1043
# pattern: a factory defines @jit project/recover closures and returns them: each call of the factory gives new functions that compile again
# expect: flag JAX202
# family: placement
# strictness: hard
# run: factorize_linear_constraints(jnp.eye(3), jnp.zeros(3), jnp.arange(3))[1](jnp.ones(3))
import jax.numpy as jnp
from jax import jit


def factorize_linear_constraints(Z, xp, unfixed_idx):
    @jit
    def project(x):
        return jnp.atleast_1d(jnp.squeeze(Z.T @ (x - xp)[unfixed_idx]))

    @jit
    def recover(x_reduced):
        dx = jnp.zeros(xp.shape[0]).at[unfixed_idx].set(Z @ x_reduced)
        return jnp.atleast_1d(jnp.squeeze(xp + dx))

    return project, recover
