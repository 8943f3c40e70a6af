# source: https://github.com/PlasmaControl/DESC/pull/755
# pattern: a module-level NumPy mode table is turned into index arrays with np.asarray/np.nonzero inside jit: the NumPy work is on concrete constants, only the gather touches traced data
# expect: no-flag
# family: semantics
# strictness: strict
# run: select_modes(jnp.arange(4.0))
import jax
import jax.numpy as jnp
import numpy as np

MODES = [(0, 0), (1, 1), (2, 0), (2, 2)]


@jax.jit
def select_modes(coeffs):
    modes = np.asarray(MODES)
    idx = np.nonzero(modes[:, 0] == modes[:, 1])[0]
    return jnp.sum(coeffs[idx] ** 2)
