# source: https://github.com/google-deepmind/distrax/blob/f51bffcf9094d269a0be8678762dd2849833c8b7/distrax/_src/bijectors/block.py#L40-L80
# pattern: a plain (non-pytree) bijector object validates `ndims` in `__init__` and its jitted bound method sums the last `self._ndims` axes with `tuple(range(-ndims, 0))` (distrax `math.sum_last`): a Python int held by a Python object, static under jit
# expect: no-flag
# family: control
# strictness: strict
# run: (module-level code)
import jax
import jax.numpy as jnp


def sum_last(x, ndims):
    axes_to_sum = tuple(range(-ndims, 0))
    return jnp.sum(x, axis=axes_to_sum)


class Block:
    def __init__(self, scale, ndims: int):
        if ndims < 0:
            raise ValueError(f"`ndims` must be non-negative; got {ndims}.")
        self._scale = scale
        self._ndims = ndims

    def forward_log_det_jacobian(self, x):
        log_det = jnp.log(jnp.abs(self._scale)) * jnp.ones_like(x)
        if self._ndims == 0:
            return log_det
        return sum_last(log_det, self._ndims)


bijector = Block(2.0, ndims=1)
log_det = jax.jit(bijector.forward_log_det_jacobian)(jnp.ones((3, 4)))
