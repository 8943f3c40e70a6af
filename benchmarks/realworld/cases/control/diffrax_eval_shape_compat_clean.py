# source: https://github.com/patrick-kidger/diffrax/blob/5ea5fcb05058bd22548300a10ea5ef5ce7fb75bb/diffrax/_integrate.py#L160-L195
# pattern: inside `eqx.filter_jit`, term/solver compatibility is checked with `ok = eqx.filter_eval_shape(better_isinstance, ...)` then `if not ok: raise`, and a warning is raised on `any(eqx.is_array_like(x) and jnp.iscomplexobj(x) for x in leaves)`: both are Python values at trace time
# expect: no-flag
# family: control
# strictness: hard
# run: solve(jnp.ones(3), 0.1)
import warnings

import equinox as eqx
import jax
import jax.numpy as jnp


def better_isinstance(x, kind):
    return isinstance(x, kind)


@eqx.filter_jit
def solve(y0, dt):
    vf_type = eqx.filter_eval_shape(jnp.sin, y0)
    compatible = eqx.filter_eval_shape(better_isinstance, vf_type, jax.Array)
    if not compatible:
        raise TypeError("vector field is incompatible")
    if any(eqx.is_array_like(x) and jnp.iscomplexobj(x) for x in jax.tree_util.tree_leaves(y0)):
        warnings.warn("complex support is a work in progress", stacklevel=2)
    return y0 + dt * jnp.sin(y0)
