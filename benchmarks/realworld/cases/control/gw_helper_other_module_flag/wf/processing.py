import jax.numpy as jnp


def initial_processing(T, delta_t, spins):
    assert jnp.all(jnp.abs(spins) <= 1.0), "spins out of bounds"
    return int(jnp.ceil(T / delta_t))
