# source: https://github.com/scipy/scipy/pull/22219
# pattern: library helper `_asarray(a, check_finite=True)` does `if not xp.all(xp.isfinite(a))`; a user jits a function that calls it
# expect: flag JAX301|JAX305
# family: control
# strictness: callgraph
# run: (module-level code)
import jax
import jax.numpy as xp


def _asarray(a, check_finite=False):
    a = xp.asarray(a)
    if check_finite and not xp.all(xp.isfinite(a)):
        raise ValueError("array must not contain infs or NaNs")
    return a


def whiten(obs):
    obs = _asarray(obs, check_finite=True)
    return obs / xp.std(obs, axis=0)


whitened = jax.jit(whiten)(xp.ones((4, 2)))
