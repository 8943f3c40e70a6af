# source: https://github.com/jax-ml/jax/pull/11770
# pattern: jax.debug.print with a format string and keyword values inside jit (runtime printing, the right tool)
# expect: no-flag
# family: semantics
# strictness: strict
# run: step(1.0)
import jax
import jax.numpy as jnp


@jax.jit
def step(x):
    y = jnp.sin(x)
    jax.debug.print("x={x} y={y}", x=x, y=y)
    return y
