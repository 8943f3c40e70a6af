# source: https://github.com/google-deepmind/weathernext/issues/41
# pattern: a normalisation helper mapped with jax.vmap calls `np.asarray(x)` on its (batched, traced) argument: TracerArrayConversionError
# expect: flag JAX402
# family: semantics
# strictness: strict
# run: normalise_all(jnp.ones((4, 3)))
import jax
import jax.numpy as jnp
import numpy as np


def normalise(x):
    stats = np.asarray(x)
    return (x - stats.mean()) / (stats.std() + 1e-6)


def normalise_all(batch):
    return jax.vmap(normalise)(batch)
