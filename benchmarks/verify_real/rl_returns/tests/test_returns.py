import jax.numpy as jnp

from returns import ReturnConfig, advantage_sign, discounted_returns


def test_returns_shape():
    r = jnp.array([1.0, 0.0, 2.0, 1.0])
    assert discounted_returns(r, ReturnConfig(gamma=0.9)).shape == (4,)


def test_unnormalized():
    r = jnp.ones(3)
    out = discounted_returns(r, ReturnConfig(gamma=0.5, normalize=False))
    assert jnp.allclose(out, jnp.array([1.75, 1.5, 1.0]))


def test_advantage_sign_both_ways():
    assert advantage_sign(jnp.array([1.0, 2.0])).shape == (2,)
    assert advantage_sign(jnp.array([-1.0, -2.0])).shape == (2,)
