# source: https://github.com/patrick-kidger/lineax/pull/188
# pattern: a jitted LU solve checks `if jnp.any(jnp.isnan(lu)):` to pick a fallback branch: Python if on a traced boolean (TracerBoolConversionError)
# expect: flag JAX301
# family: control
# strictness: strict
# run: solve(jnp.eye(3), jnp.ones(3))
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl


@jax.jit
def solve(A, b):
    lu, piv = jsl.lu_factor(A)
    if jnp.any(jnp.isnan(lu)):
        return jnp.full_like(b, jnp.nan)
    else:
        return jsl.lu_solve((lu, piv), b)
