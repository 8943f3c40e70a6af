# source: https://github.com/jax-ml/jax/pull/7345
# pattern: a jitted function appends its traced argument to a module-level list to inspect it later: runs once per trace and stores a tracer that leaks
# expect: flag JAX404
# family: semantics
# strictness: strict
# run: f(jnp.float32(3.0))
import jax
import jax.numpy as jnp

intermediates = []


@jax.jit
def f(x):
    y = jnp.sin(x) * 2.0
    intermediates.append(y)
    return y + x
