# source: https://github.com/gchq/coreax/issues/470
# pattern: a test helper times a jitted call with time.time() and never blocks, so it measures dispatch only
# expect: flag JAX501
# family: cost
# strictness: strict
# run: (module-level code)
import time

import jax
import jax.numpy as jnp


def jit_test(fn, *args):
    jitted = jax.jit(fn)
    start = time.time()
    jitted(*args)
    compiled = time.time() - start
    start = time.time()
    jitted(*args)
    return compiled, time.time() - start


print(jit_test(jnp.sin, jnp.ones(1000)))
