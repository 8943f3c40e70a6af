# source: https://github.com/PlasmaControl/DESC/pull/998
# pattern: a radial function branches with Python `if` on its derivative-order argument; it is called as jax.jit(jax.jacrev(f))(r, l, m, 0) so that argument is traced
# expect: flag JAX301
# family: control
# strictness: callgraph
# run: (module-level code)
import jax
import jax.numpy as jnp


def zernike_radial(r, l, m, dr=0):
    if dr == 0:
        return r ** l * jnp.cos(m * r)
    return l * r ** (l - 1) * jnp.cos(m * r)


r = jnp.linspace(0, 1, 100)
l = jnp.arange(10.0)
m = jnp.arange(10.0)
jac = jax.jit(jax.jacrev(zernike_radial))(r, l, m, 0)
