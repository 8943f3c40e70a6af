# source: https://github.com/jax-ml/jax/issues/9288
# pattern: jax.jit(f)(x) inside a function, with f a module-level function: jit caches on f's identity, so repeated calls reuse one compile
# expect: no-flag
# family: placement
# strictness: hard
# run: (module-level code)
import jax
import jax.numpy as jnp


def unjitted_loop_body(prev_i):
    return prev_i + 1


def advance(i):
    return jax.jit(unjitted_loop_body)(i)


state = jnp.asarray(0)
state = advance(state)
