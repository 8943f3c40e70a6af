# source: https://github.com/google-deepmind/optax/blob/v0.2.8/optax/_src/utils.py
# pattern: np.asarray(a) only in the else branch of `hasattr(a, "shape")`: a tracer always has .shape, so NumPy never sees it under jit (check_shapes_equal and check_rank, called from losses/_classification.py ctc_loss_with_forward_probs)
# expect: no-flag
# family: semantics
# strictness: strict
# run: masked_mean(jnp.ones((3, 4)), jnp.ones((3, 4)))
import jax
import jax.numpy as jnp
import numpy as np


def check_shapes_equal(a, b):
    a_shape = a.shape if hasattr(a, "shape") else np.asarray(a).shape
    if hasattr(b, "shape"):
        b_shape = b.shape
    else:
        b_shape = np.asarray(b).shape
    if a_shape != b_shape:
        raise ValueError(f"shape mismatch: {a_shape} vs {b_shape}")


@jax.jit
def masked_mean(values, mask):
    check_shapes_equal(values, mask)
    return jnp.sum(values * mask) / jnp.sum(mask)
