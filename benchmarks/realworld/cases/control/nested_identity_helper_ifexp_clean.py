# source: https://github.com/google-deepmind/dm-haiku/blob/f4d858a/haiku/_src/stateful.py
# pattern: a nested helper returns identity tests (`a[0] is not b[0]`) and its result picks a branch with a conditional expression inside traced code: static
# expect: no-flag
# family: control
# strictness: strict
# run: newer((jnp.ones(2), jnp.zeros(2)), (jnp.ones(2), jnp.zeros(2)))
import jax
import jax.numpy as jnp


@jax.jit
def newer(before, after):
    def is_new(a, b):
        if a is None:
            return True
        return a[0] is not b[0] or a[1] is not b[1]

    return after if is_new(before, after) else before
