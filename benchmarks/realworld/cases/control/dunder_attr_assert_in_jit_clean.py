# source: https://github.com/patrick-kidger/equinox/blob/9336d82/tests/test_module.py
# pattern: asserts on a wrapped function's __name__/__doc__ inside a jitted function: dunder attributes are Python metadata, never traced
# expect: no-flag
# family: control
# strictness: strict
# run: apply(jnp.ones(3))
import functools

import jax
import jax.numpy as jnp


def scale(x):
    """Doubles x."""
    return 2 * x


@functools.wraps(scale)
def wrapped(x):
    return scale(x)


@jax.jit
def apply(x):
    assert wrapped.__name__ == "scale"
    assert wrapped.__doc__ == "Doubles x."
    return wrapped(x)
