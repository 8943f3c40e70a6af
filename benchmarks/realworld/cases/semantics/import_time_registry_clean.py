# source: https://github.com/google/brax/issues/227
# pattern: a module-level dict filled only at import time by a decorator (a registry of step functions) and read inside jit: never changes after import
# expect: no-flag
# family: semantics
# strictness: hard
# run: action(1.0)
import jax
import jax.numpy as jnp

_ACTUATORS = {}


def register(name):
    def wrap(fn):
        _ACTUATORS[name] = fn
        return fn

    return wrap


@register("sine")
def sine(i, size):
    return jnp.sin(i * jnp.pi / 15 + jnp.arange(size) * jnp.pi)


@jax.jit
def action(i):
    return _ACTUATORS["sine"](i, 4)
