# source: https://github.com/jax-ml/jax/issues/3086
# pattern: `global x; x = y` inside a jitted function stores a tracer in module state
# expect: flag JAX404
# family: semantics
# strictness: strict
# run: (module-level code)
import jax

x = None


@jax.jit
def f(y):
    global x
    x = y
    return y + 2


f(7)
