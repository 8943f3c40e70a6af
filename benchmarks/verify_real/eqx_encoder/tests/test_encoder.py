import jax
import jax.numpy as jnp

from encoder.model import encode_batch, make_encoder


def test_weight_norm_positive():
    layer = make_encoder(jax.random.PRNGKey(0), 4, 3)
    assert float(layer.weight_norm) > 0


def test_encode_shape():
    layer = make_encoder(jax.random.PRNGKey(1), 4, 3)
    assert encode_batch(layer, jnp.ones((5, 4))).shape == (5, 3)
