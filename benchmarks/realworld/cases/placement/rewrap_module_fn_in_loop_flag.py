# source: https://github.com/jax-ml/jax/issues/9288
# pattern: jax.jit(module_level_fn)(i) inside a loop: the compile is cached on the function, but a wrapper is rebuilt and looked up every iteration
# expect: flag JAX203
# family: placement
# strictness: strict
# run: g_inner_jitted(1, 3)
import jax


def unjitted_loop_body(prev_i):
    return prev_i + 1


def g_inner_jitted(x, n):
    i = 0
    while i < n:
        i = jax.jit(unjitted_loop_body)(i)
    return x + i
