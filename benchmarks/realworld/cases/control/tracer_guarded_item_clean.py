# source: https://github.com/patrick-kidger/equinox/blob/9336d82/equinox/_errors.py
# pattern: `.item()` only in the branch where `not isinstance(pred, jax.core.Tracer)`: eager callers short-circuit on a concrete predicate, traced callers never reach it
# expect: no-flag
# family: control
# strictness: strict
# run: checked(jnp.ones(3), jnp.array(False))
import jax
import jax.numpy as jnp


def error_if(x, pred):
    if not isinstance(pred, jax.core.Tracer):
        if isinstance(pred, jax.Array):
            pred = pred.item()
        if pred is False:
            return x
    return jnp.where(pred, jnp.nan, x)


@jax.jit
def checked(x, pred):
    return error_if(x, pred)
