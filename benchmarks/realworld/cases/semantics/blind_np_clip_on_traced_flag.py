# source: https://github.com/PlasmaControl/DESC/issues/1403
# pattern: an objective's jitted compute clips a traced quantity with `np.clip` (NumPy), which calls __array__ on the tracer: TracerArrayConversionError
# expect: flag JAX402
# family: semantics
# strictness: strict
# run: aspect_ratio_error(jnp.array([1.0, 5.0, 9.0]), 5.0)
import jax
import jax.numpy as jnp
import numpy as np


@jax.jit
def aspect_ratio_error(R, target):
    ratio = R / jnp.mean(R)
    ratio = np.clip(ratio, 0.1, 10.0)
    return jnp.sum((ratio - target) ** 2)
