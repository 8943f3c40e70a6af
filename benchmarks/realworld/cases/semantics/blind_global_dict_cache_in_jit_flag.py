# source: https://github.com/google/flax/pull/5518
# pattern: a module-level dict memoises per-key results computed inside a jitted function (`_CACHE[key] = value`): filled once at trace time with tracers, never again at run time
# expect: flag JAX404
# family: semantics
# strictness: strict
# run: spectrum(jnp.ones(8))
import jax
import jax.numpy as jnp

_CACHE = {}


@jax.jit
def spectrum(signal):
    key = signal.shape
    if key not in _CACHE:
        _CACHE[key] = jnp.hanning(signal.shape[0]) * jnp.mean(signal)
    return jnp.abs(jnp.fft.rfft(signal * _CACHE[key]))
