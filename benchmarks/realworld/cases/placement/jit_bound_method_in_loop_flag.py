# source: https://github.com/jax-ml/jax/issues/9672
# pattern: jit(x.f)() in a loop: `x.f` is a new bound-method object each time, so jit misses its cache every iteration
# expect: flag JAX201
# family: placement
# strictness: strict
# run: (module-level code)
from jax import jit


class Stepper:
    def f(self):
        return 1.0


x = Stepper()
for i in range(3):
    jit(x.f)()
