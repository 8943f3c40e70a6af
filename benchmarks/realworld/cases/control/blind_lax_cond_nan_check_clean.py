# source: https://github.com/patrick-kidger/lineax/pull/188
# pattern: the fix from the PR: the traced NaN check selects the branch with lax.cond, no Python if on a tracer
# expect: no-flag
# family: control
# strictness: strict
# run: solve(jnp.eye(3), jnp.ones(3))
import jax
import jax.numpy as jnp
import jax.scipy.linalg as jsl


@jax.jit
def solve(A, b):
    lu, piv = jsl.lu_factor(A)
    return jax.lax.cond(
        jnp.any(jnp.isnan(lu)),
        lambda: jnp.full_like(b, jnp.nan),
        lambda: jsl.lu_solve((lu, piv), b),
    )
