# source: https://github.com/jax-ml/jax/pull/13022
# pattern: a function mapped with jax.vmap stores a closure over its argument in a dict on a module-level object
# expect: flag JAX404
# family: semantics
# strictness: callgraph
# run: (module-level code)
import jax


class A:
    def __init__(self, dct):
        self.dct = dct


a = A({})


def sketch(x):
    a.dct["hi"] = [lambda: x]
    return x


jax.vmap(sketch)(jax.numpy.arange(3))
