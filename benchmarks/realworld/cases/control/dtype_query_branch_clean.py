# source: https://github.com/probabilistic-numerics/probnum/blob/HEAD/src/probnum/backend/_core/_jax.py
# pattern: a helper whose body only reads the dtype (`jnp.issubdtype(a.dtype, jnp.floating)`) decides a Python `if` inside jit: static
# expect: no-flag
# family: control
# strictness: hard
# run: normalise(jnp.arange(3))
import jax
import jax.numpy as jnp


def is_floating(a):
    return jnp.issubdtype(a.dtype, jnp.floating)


@jax.jit
def normalise(a):
    if not is_floating(a):
        a = a.astype(jnp.float32)
    if jnp.iscomplexobj(a):
        a = jnp.abs(a)
    return a / jnp.linalg.norm(a)
