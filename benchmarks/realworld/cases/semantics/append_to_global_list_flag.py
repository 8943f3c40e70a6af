# source: https://github.com/jax-ml/jax/pull/5492
# pattern: lst.append(x) on a module-level list inside a jitted function: the list keeps a tracer after tracing ends
# expect: flag JAX404
# family: semantics
# strictness: strict
# run: (module-level code)
from jax import jit

lst = []


@jit
def f(x):
    lst.append(x)
    return x


f(3.0)
