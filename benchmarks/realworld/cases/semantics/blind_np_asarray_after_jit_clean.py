# source: https://github.com/google-deepmind/weathernext/issues/41
# pattern: the jitted forward pass returns a JAX array and the caller converts it with np.asarray afterwards, eagerly, outside any trace
# expect: no-flag
# family: semantics
# strictness: strict
# run: predict_numpy(jnp.ones((4, 3)))
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def forward(batch):
    return (batch - batch.mean(axis=0)) / (batch.std(axis=0) + 1e-6)


def predict_numpy(batch):
    out = np.asarray(forward(batch))
    return out.round(3)
