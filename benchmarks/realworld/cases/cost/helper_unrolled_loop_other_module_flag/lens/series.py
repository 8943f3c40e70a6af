import jax.numpy as jnp


def R_omega(z, t):
    omega = jnp.zeros_like(z)
    term = z
    for n in range(1, 500):
        term = term * (-(2 * n - t) / (2 * n + 2 - t)) * z**2
        omega = omega + term
    return omega
