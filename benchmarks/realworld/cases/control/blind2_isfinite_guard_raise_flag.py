# source: https://github.com/f0uriest/interpax/issues/96
# pattern: a jitted spline setup validates its knots with `if not jnp.all(jnp.isfinite(x)): raise ValueError(...)`: the check needs the truth value of a traced reduction
# expect: flag JAX301|JAX305
# family: control
# strictness: strict
# run: prepare_spline(jnp.array([0.0, 1.0, 2.0]), jnp.array([0.0, 1.0, 4.0]))
import jax
import jax.numpy as jnp


@jax.jit
def prepare_spline(x, y):
    if not jnp.all(jnp.isfinite(x)):
        raise ValueError("x must be finite")
    dx = jnp.diff(x)
    slopes = jnp.diff(y) / dx
    return dx, slopes
