# source: https://github.com/Roy-Kid/ADMP/blob/HEAD/admp/settings.py
# pattern: a decorator factory `jit_condition(...)` returns `jit(func, **kwargs)` (or func) from a nested deco; it runs once per decorated module-level function, the result is returned, not called
# expect: no-flag
# family: placement
# strictness: strict
# run: pair_energy(jnp.ones(3), jnp.zeros(3))
import jax.numpy as jnp
from jax import jit

DO_JIT = True


def jit_condition(*args, **kwargs):
    def jit_deco(func):
        if DO_JIT:
            return jit(func, *args, **kwargs)
        return func

    return jit_deco


@jit_condition()
def pair_energy(r1, r2):
    return 1.0 / (jnp.linalg.norm(r1 - r2) + 1.0)
