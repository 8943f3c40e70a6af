# source: https://github.com/jax-ml/jax/pull/17650
# pattern: builtin `max(x, floor)` on traced scalars inside jit: max compares with `>` and converts the traced result to bool
# expect: flag JAX301|JAX305|JAX304
# family: control
# strictness: strict
# run: clipped_step(jnp.float32(0.5), jnp.float32(0.1))
import jax
import jax.numpy as jnp


@jax.jit
def clipped_step(lr, floor):
    lr = max(lr * 0.9, floor)
    return lr * jnp.ones(3)
