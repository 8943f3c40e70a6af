# source: https://github.com/Roy-Kid/ADMP/blob/HEAD/admp/settings.py
# pattern: a module flag DO_JIT, reassigned through a `global` setter, is read only by an eager decorator factory at definition time, never inside traced code
# expect: no-flag
# family: semantics
# strictness: strict
# run: pair_energy(jnp.ones(3), jnp.zeros(3))
import jax.numpy as jnp
from jax import jit

DO_JIT = False


def set_jit(flag):
    global DO_JIT
    DO_JIT = flag


def jit_condition(func):
    return jit(func) if DO_JIT else func


set_jit(True)


@jit_condition
def pair_energy(r1, r2):
    return 1.0 / (jnp.linalg.norm(r1 - r2) + 1.0)
