# source: https://github.com/GalacticDynamics/galax/pull/692
# pattern: __check_init__ compares array *shapes* with `or` and raises: shapes are static under jit, so the Python `if` is fine
# expect: no-flag
# family: control
# strictness: hard
# run: evaluate(jnp.ones((4,4)), jnp.ones((4,4)), 2.0)
import equinox as eqx
import jax
import jax.numpy as jnp


class Multipole(eqx.Module):
    l_max: int = eqx.field(static=True)
    inner_s: jax.Array
    outer_s: jax.Array

    def __check_init__(self):
        shape = (self.l_max + 1, self.l_max + 1)
        is_shape = self.inner_s.shape
        os_shape = self.outer_s.shape
        if is_shape != shape or os_shape != shape:
            raise ValueError("coefficients must have shape (l_max + 1, l_max + 1)")

    def value(self, r):
        return jnp.sum(self.inner_s) * r + jnp.sum(self.outer_s) / r


@jax.jit
def evaluate(inner_s, outer_s, r):
    return Multipole(3, inner_s, outer_s).value(r)
