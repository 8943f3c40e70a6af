# source: https://github.com/jax-ml/jax/issues/9288
# pattern: jax.jit(lambda x: body(x)) built inside a while loop: a fresh function each iteration, so each iteration retraces and recompiles
# expect: flag JAX201
# family: placement
# strictness: strict
# run: g_inner_jitted_poorly(1, 3)
import jax


def unjitted_loop_body(prev_i):
    return prev_i + 1


def g_inner_jitted_poorly(x, n):
    i = 0
    while i < n:
        i = jax.jit(lambda v: unjitted_loop_body(v))(i)
    return x + i
