# source: https://github.com/google/flax/blob/HEAD/flax/core/lift.py
# pattern: a `jit` transform factory defines a jitted nested def and returns a closure `inner` that calls it: the jitted function is made once per factory call and reused by every call of the returned closure
# expect: no-flag
# family: placement
# strictness: hard
# run: (module-level code)
import jax
import jax.numpy as jnp


def jit(fn, static_argnums=()):
    @jax.jit
    def jitted(x):
        return fn(x)

    def inner(x):
        return jitted(x)

    return inner


double = jit(lambda v: v * 2)
ys = [double(jnp.ones(3) * i) for i in range(3)]
