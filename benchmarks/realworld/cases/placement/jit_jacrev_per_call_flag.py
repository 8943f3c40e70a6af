# source: https://github.com/PlasmaControl/DESC/pull/998
# pattern: jax.jit(jax.jacrev(f))(...) inside a function called for each basis: jacrev returns a new function each time, so each call recompiles
# expect: flag JAX202
# family: placement
# strictness: hard
# run: all_jacobians(jnp.linspace(0, 1, 3), [jnp.ones((3, 2))] * 2)
import jax
import jax.numpy as jnp


def zernike_radial(r, l, m):
    return r ** l * jnp.cos(m * r)


def radial_jacobian(r, modes):
    return jax.jit(jax.jacrev(zernike_radial))(r, modes[:, 0], modes[:, 1])


def all_jacobians(r, bases):
    return [radial_jacobian(r, modes) for modes in bases]
