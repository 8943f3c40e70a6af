# source: https://github.com/probabilistic-numerics/probnum/blob/HEAD/src/probnum/backend/_core/_jax.py
# pattern: project-local `jit_method(f, static_argnums)` shifts static_argnums by one for self and is applied once at class level
# expect: no-flag
# family: placement
# strictness: strict
# run: Kernel(1.0).evaluate(jnp.ones(2), jnp.zeros(2))
import jax
import jax.numpy as jnp


def jit_method(f, *args, static_argnums=None, **kwargs):
    _static_argnums = (0,)
    if static_argnums is not None:
        _static_argnums += tuple(argnum + 1 for argnum in static_argnums)
    return jax.jit(f, *args, static_argnums=_static_argnums, **kwargs)


class Kernel:
    def __init__(self, lengthscale):
        self.lengthscale = lengthscale

    def _evaluate(self, x0, x1):
        return jnp.exp(-jnp.sum((x0 - x1) ** 2, -1) / self.lengthscale)

    evaluate = jit_method(_evaluate)
