# source: https://github.com/f0uriest/interpax/issues/96
# pattern: a constructor validated by a helper with `not jnp.all(jnp.isfinite(x))`; the class is jitted directly, so the helper runs on tracers
# expect: flag JAX301|JAX305
# family: control
# strictness: callgraph
# run: (module-level code)
import jax
import jax.numpy as jnp


def prepare_input(x, y, check=True):
    x = jnp.asarray(x)
    y = jnp.asarray(y)
    if check and not jnp.all(jnp.isfinite(x)):
        raise ValueError("x must contain only finite values")
    return x, y


class CubicSpline:
    def __init__(self, x, y, check=True):
        self.x, self.y = prepare_input(x, y, check)


spline = jax.jit(CubicSpline)(jnp.array([0.0, 1.0, 2.0]), jnp.array([0.0, 1.0, 4.0]))
