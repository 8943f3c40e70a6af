# source: https://github.com/jax-ml/jax/issues/21300
# pattern: a module-level `v = jnp.zeros((200000, 10, 10))` (20M elements) is read by a function that is jitted with no arguments: the whole array becomes a constant that XLA tries to fold
# expect: flag JAX503
# family: cost
# strictness: strict
import jax
import jax.numpy as jnp

v = jnp.zeros((200000, 10, 10))


def f():
    return jax.vmap(jax.vmap(jnp.sum))(v)


row_sums = jax.jit(f)()
