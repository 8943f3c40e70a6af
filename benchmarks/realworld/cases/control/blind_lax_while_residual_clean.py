# source: https://github.com/google/jaxopt/issues/563
# pattern: the same fixed-point iteration written with lax.while_loop: the traced condition lives in cond_fun
# expect: no-flag
# family: control
# strictness: strict
# run: fixed_point(jnp.ones(3), 1e-4)
import jax
import jax.numpy as jnp


@jax.jit
def fixed_point(x0, tol):
    def cond_fun(carry):
        x, x_new = carry
        return jnp.linalg.norm(x_new - x) > tol

    def body_fun(carry):
        _, x_new = carry
        return x_new, jnp.cos(x_new)

    _, x = jax.lax.while_loop(cond_fun, body_fun, (x0, jnp.cos(x0)))
    return x
