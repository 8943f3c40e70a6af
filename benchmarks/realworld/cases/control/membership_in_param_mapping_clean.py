# source: https://github.com/google-deepmind/dm-haiku/blob/f4d858a/haiku/_src/stateful.py
# pattern: inside traced code, `if k1 in a and k2 in a[k1]` looks keys up in two-level parameter mappings: a Python bool, not a traced one
# expect: no-flag
# family: control
# strictness: strict
# run: merge({"lin": {"w": jnp.ones(2)}}, {"lin": {"w": jnp.zeros(2), "b": jnp.zeros(2)}})
import jax
import jax.numpy as jnp


@jax.jit
def merge(old, new):
    out = {}
    for k1, v1 in new.items():
        out[k1] = {}
        for k2 in v1:
            if k1 in old and k2 in old[k1]:
                out[k1][k2] = old[k1][k2] + new[k1][k2]
            else:
                out[k1][k2] = new[k1][k2]
    return out
