# source: https://github.com/patrick-kidger/diffrax/blob/5ea5fcb05058bd22548300a10ea5ef5ce7fb75bb/diffrax/_adjoint.py#L646-L730
# pattern: a `lax.scan` body `_scan_fun(state, vals, first=False)` is also called once directly as `_scan_fun(state, val0, first=True)`: `first` only ever holds a Python bool, so `made_jump = not first` is static
# expect: no-flag
# family: control
# strictness: hard
# run: backward(jnp.ones(2), jnp.ones((3, 2)))
import jax
import jax.numpy as jnp


def backward(y, vals):
    def _scan_fun(state, val, first=False):
        made_jump = not first
        new = state * 0.5 + val
        return jnp.where(made_jump, new, state + val), None

    state, _ = _scan_fun(y, vals[0], first=True)
    state, _ = jax.lax.scan(_scan_fun, state, vals[1:], reverse=True)
    return state
