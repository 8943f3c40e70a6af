# source: https://github.com/jax-ml/jax/issues/23479
# pattern: the author's fix: the arrays are built inside the traced function from static sizes, nothing is captured
# expect: no-flag
# family: cost
# strictness: strict
# run: forward(jnp.ones((1000, 64)))
import jax
import jax.numpy as jnp

n, m, s = 1000, 5000, 64


@jax.jit
def forward(params):
    alpha = jnp.ones((m, s))
    idx1 = jax.random.randint(jax.random.PRNGKey(0), (m,), 0, n)
    idx2 = jax.random.randint(jax.random.PRNGKey(1), (m,), 0, n)
    g1 = params[idx1, :]
    g2 = params[idx2, :]
    return jnp.sum(g1 * alpha * g2.conj(), axis=1)
