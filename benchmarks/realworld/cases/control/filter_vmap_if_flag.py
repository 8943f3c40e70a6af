# source: https://github.com/GalacticDynamics/galax/pull/692
# pattern: eqx.filter_vmap maps a potential evaluation whose Python `if` tests the (batched, traced) radius
# expect: flag JAX301
# family: control
# strictness: callgraph
# run: (module-level code)
import equinox as eqx
import jax.numpy as jnp


def potential(r, m, r_s):
    if r < r_s:
        return -m / r_s
    return -m * jnp.log1p(r / r_s) / r


radii = jnp.linspace(0.1, 10.0, 32)
values = eqx.filter_vmap(lambda r: potential(r, 1.0, 2.0))(radii)
