# source: https://github.com/Roy-Kid/ADMP/blob/HEAD/admp/settings.py
# pattern: a module-level unit factor is reassigned through a `global` setter but read inside a jitted energy: the value is frozen at the first trace and later changes are ignored
# expect: flag JAX404
# family: semantics
# strictness: strict
# run: energy(jnp.ones(3))
import jax
import jax.numpy as jnp

ENERGY_UNIT = 1.0


def set_units(kcal):
    global ENERGY_UNIT
    ENERGY_UNIT = 4.184 if kcal else 1.0


@jax.jit
def energy(r):
    return ENERGY_UNIT * jnp.sum(1.0 / (r + 1.0))
