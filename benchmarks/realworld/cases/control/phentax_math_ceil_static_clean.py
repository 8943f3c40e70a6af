# source: https://github.com/asantini29/phentax/pull/28
# pattern: the fix: the duration is a static Python float (static_argnums) and math.ceil keeps the count concrete; the array check runs only outside tracing
# expect: no-flag
# family: control
# strictness: hard
# run: waveform(1.0, 0.25, jnp.asarray(2.0))
import functools
import math

import jax
import jax.numpy as jnp


def initial_processing(T, delta_t):
    return math.ceil(T / delta_t)


@functools.partial(jax.jit, static_argnums=(0, 1))
def waveform(T, delta_t, amplitude):
    n = initial_processing(T, delta_t)
    return amplitude * jnp.ones(n)


def check_spins(spins):
    if not isinstance(spins, jax.core.Tracer):
        assert jnp.all(jnp.abs(spins) <= 1.0)
    return spins
