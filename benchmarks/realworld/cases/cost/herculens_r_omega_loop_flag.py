# source: https://github.com/Herculens/herculens/pull/29
# pattern: a series summed with a Python `for` over a large static range inside a jitted lens-profile function
# expect: flag JAX502
# family: cost
# strictness: strict
import jax
import jax.numpy as jnp


@jax.jit
def R_omega(z, t):
    omega = jnp.zeros_like(z)
    term = z
    for n in range(1, 500):
        term = term * (-(2 * n - t) / (2 * n + 2 - t)) * z**2
        omega = omega + term
    return omega
