import jax.numpy as jnp

from vae.prior import GaussianPrior, kl_term


def test_variance():
    prior = GaussianPrior(mean=jnp.zeros(3), log_std=jnp.zeros(3))
    assert jnp.allclose(prior.variance, 1.0)


def test_kl_branches():
    prior = GaussianPrior(mean=jnp.zeros(3), log_std=jnp.full(3, 0.1))
    z = jnp.array([0.5, -0.2, 1.0])
    assert kl_term(prior, z, 2.0) > kl_term(prior, z, 0.5)
