# source: https://github.com/jax-ml/jax/issues/20254
# pattern: np.array(x) on the traced argument of a function run under jax.jit
# expect: flag JAX402
# family: semantics
# strictness: strict
# run: (module-level code)
import jax
import numpy as np


def f(x):
    return np.array(x) * 2


jax.jit(f)(np.ones(3))
