# source: https://github.com/Roy-Kid/ADMP/blob/HEAD/admp/settings.py
# pattern: the same unit factor and `global` setter, and a driver that calls the setter between calls of the jitted energy: the compiled energy keeps the unit of its first trace
# expect: flag JAX404
# family: semantics
# strictness: strict
# run: scan_units(jnp.ones(3))
import jax
import jax.numpy as jnp

ENERGY_UNIT = 1.0


def set_units(kcal):
    global ENERGY_UNIT
    ENERGY_UNIT = 4.184 if kcal else 1.0


@jax.jit
def energy(r):
    return ENERGY_UNIT * jnp.sum(1.0 / (r + 1.0))


def scan_units(r):
    out = []
    for kcal in (False, True):
        out.append(energy(r))
        set_units(kcal)  # after the first trace: `energy` keeps ENERGY_UNIT = 1.0
    return out
