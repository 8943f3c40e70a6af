# source: https://github.com/Roy-Kid/ADMP/blob/HEAD/admp/settings.py
# pattern: a module-level unit factor with a `global` setter that the module never calls, read inside a jitted energy: whether the setter runs after a trace (stale value) or at setup (harmless) is unknown, so precision first says no (issue #29: setters called at setup were the blind pool's JAX404 false alarms)
# expect: no-flag
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
