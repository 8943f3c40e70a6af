# source: https://github.com/jax-ml/jax/issues/2287
# pattern: a module-level scalar constant (never reassigned) read inside a jitted integrator step
# expect: no-flag
# family: semantics
# strictness: strict
# run: pendulum_step(1.0, 0.0)
import jax
import jax.numpy as jnp
import numpy as np

C = 4 * np.pi**2
DT = 1e-3


@jax.jit
def pendulum_step(x, v):
    x = x + v * DT
    v = v - C * jnp.sin(x) * DT
    return x, v
