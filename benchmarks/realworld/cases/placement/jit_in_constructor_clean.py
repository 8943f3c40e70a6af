# source: https://github.com/jax-ml/jax/issues/9672
# pattern: the workaround from the thread: jit the bound method once in __init__ and keep it on the instance
# expect: no-flag
# family: placement
# strictness: strict
# run: (module-level code)
import jax


class Adder:
    def __init__(self):
        self.f = jax.jit(self.f)

    def f(self, a, b, c):
        return a + b + c


x = Adder()
for i in range(3):
    x.f(1.0, 2.0, 3.0)
