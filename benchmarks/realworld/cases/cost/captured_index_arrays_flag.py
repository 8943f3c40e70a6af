# source: https://github.com/jax-ml/jax/issues/23479
# pattern: module-level index and weight arrays built with jax.random / jnp.ones are read by a jitted forward pass (captured constants, 320k elements: below the rule's default size, 10x slower in the thread)
# expect: flag JAX503
# family: cost
# strictness: hard
# run: forward(jnp.ones((1000, 64)))
import jax
import jax.numpy as jnp

n, m, s = 1000, 5000, 64
alpha = jnp.ones((m, s))
idx1 = jax.random.randint(jax.random.PRNGKey(0), (m,), 0, n)
idx2 = jax.random.randint(jax.random.PRNGKey(1), (m,), 0, n)


@jax.jit
def forward(params):
    g1 = params[idx1, :]
    g2 = params[idx2, :]
    return jnp.sum(g1 * alpha * g2.conj(), axis=1)
