"""Inputs for verifying the fixes in this folder: `jaxfix fix examples/ --verify --examples examples/verify_examples.py`.

Each entry names a function, method or property (by qualified name) and the calls to make;
methods and properties take the instance first. See docs/verify.md.
"""

import jax.numpy as jnp

from jaxfix.verify import call

EXAMPLES = {
    # Both sides of the branch, the boundary, and a value whose log would be NaN on the untaken side.
    "soft_clip": [call(jnp.float32(x)) for x in (3.0, 1.0, 0.5, -2.0)],
    # Zero, one and many trips of the while loop.
    "count_halvings": [call(jnp.float32(x)) for x in (0.5, 1.5, 100.0)],
    "run_partial": [call(jnp.linspace(-1.0, 1.0, 5)), call(jnp.ones(3), steps=2)],
    "run_lambda": [call(jnp.linspace(-1.0, 1.0, 5)), call(jnp.ones(3), steps=2)],
    "Gaussian.precision": lambda mod: [
        call(mod.Gaussian(mean=jnp.zeros(3), log_std=jnp.array([0.0, -0.5, 1.0])))
    ],
}
