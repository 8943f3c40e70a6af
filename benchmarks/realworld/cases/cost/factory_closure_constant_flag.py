# source: https://github.com/jax-ml/jax/issues/14655
# pattern: a factory builds a big index array and returns a closure over it; a jitted function calls the closure, so the array is constant-folded into the program
# expect: flag JAX503
# family: cost
# strictness: hard
import jax
import jax.numpy as jnp

n = 1_000_000


def build_operator():
    nonzeroes = jnp.stack([jnp.arange(n), jnp.arange(n)], axis=1)

    def product(other):
        return jnp.zeros(n).at[nonzeroes[:, 0]].add(other[nonzeroes[:, 1]])

    return product


operator = build_operator()


def fn(x):
    return operator(jnp.ones(n) / x).sum()


jax.jit(fn)(1.0)
