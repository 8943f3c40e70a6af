import jax


class Foo:
    def __init__(self):
        self.traced = 0

    def f(self):
        self.traced += 1
        return 1.0


def lower_twice(foo):
    jax.jit(foo.f).lower()
    jax.jit(foo.f).lower()
    return foo.traced


def test_bound_method_retraces():
    assert lower_twice(Foo()) == 2
