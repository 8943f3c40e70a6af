# source: https://github.com/astro-informatics/s2fft/pull/363
# pattern: argument checks that only assert on the static band-limit L (static_argnums) and on array shapes, inside a jitted recursion
# expect: no-flag
# family: control
# strictness: hard
# run: trapani_step(jnp.ones(5), 3, 1.0)
from functools import partial

import jax
import jax.numpy as jnp


def _check_inputs(dl, L, el):
    assert L > 0, "band-limit must be positive"
    assert dl.shape[0] == 2 * L - 1, "dl has the wrong length"
    assert dl.ndim == 1


@partial(jax.jit, static_argnums=(1,))
def trapani_step(dl, L, el):
    _check_inputs(dl, L, el)
    return dl * jnp.sqrt((el + 1.0) / (2 * L))
