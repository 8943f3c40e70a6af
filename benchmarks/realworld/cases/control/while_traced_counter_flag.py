# source: https://github.com/jax-ml/jax/issues/9288
# pattern: Python `while i < n` inside a jitted function where n is a traced argument
# expect: flag JAX302
# family: control
# strictness: strict
# run: count_up(1.0, 3)
import jax


def loop_body(i):
    return i + 1


@jax.jit
def count_up(x, n):
    i = 0
    while i < n:
        i = loop_body(i)
    return x + i
