# source: https://github.com/pyro-ppl/numpyro/issues/2000
# pattern: a module-level cache dict filled and cleared by ordinary code between runs and read inside a jitted kernel (read once, at trace time)
# expect: flag JAX404
# family: semantics
# strictness: hard
# run: run_chain(jnp.ones(2), jnp.ones(2), [0.1, 0.2])
import jax
import jax.numpy as jnp

_CACHE = {}


def set_step_size(value):
    _CACHE.clear()
    _CACHE["step_size"] = value


@jax.jit
def leapfrog(q, p):
    eps = _CACHE["step_size"]
    return q + eps * p, p


def run_chain(q, p, step_sizes):
    for eps in step_sizes:
        set_step_size(eps)
        q, p = leapfrog(q, p)
    return q
