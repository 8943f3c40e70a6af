# source: https://github.com/patrick-kidger/diffrax/blob/5ea5fcb05058bd22548300a10ea5ef5ce7fb75bb/test/helpers.py#L218-L275
# pattern: under `eqx.filter_jit` the parameter `levels: tuple[int, int]` is a Python value (filter_jit traces array leaves only): `lo, hi = levels` then `for level in range(lo, hi + 1)` is a static loop
# expect: no-flag
# family: control
# strictness: hard
# run: strong_order(jnp.ones(2), (1, 3))
import equinox as eqx
import jax.numpy as jnp


@eqx.filter_jit
def strong_order(y0, levels: tuple[int, int]):
    level_coarse, level_fine = levels
    errors = []
    for level in range(level_coarse, level_fine + 1):
        dt = 2.0**-level
        errors.append(jnp.abs(y0 * jnp.exp(-dt) - y0 * (1 - dt)).max())
    return jnp.stack(errors)
