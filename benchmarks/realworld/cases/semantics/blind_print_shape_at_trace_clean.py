# source: https://github.com/jax-ml/jax/issues/2814
# pattern: a jitted function prints `x.shape` and `x.dtype` to log (re)compilations: both are static, so printing them at trace time is the intent and correct
# expect: no-flag
# family: semantics
# strictness: strict
# run: f(jnp.ones((2, 3)))
import jax
import jax.numpy as jnp


@jax.jit
def f(x):
    print(f"compiling f for shape {x.shape} and dtype {x.dtype}")
    return x * x
