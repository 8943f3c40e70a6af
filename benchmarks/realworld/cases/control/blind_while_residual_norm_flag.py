# source: https://github.com/google/jaxopt/issues/563
# pattern: a jitted fixed-point solver loops `while jnp.linalg.norm(x_new - x) > tol:`; the loop condition is a traced value
# expect: flag JAX302
# family: control
# strictness: strict
# run: fixed_point(jnp.ones(3), 1e-4)
import jax
import jax.numpy as jnp


@jax.jit
def fixed_point(x0, tol):
    x = x0
    x_new = jnp.cos(x)
    while jnp.linalg.norm(x_new - x) > tol:
        x = x_new
        x_new = jnp.cos(x)
    return x_new
