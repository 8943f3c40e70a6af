# source: https://github.com/zprihoda/zopt/blob/HEAD/zopt/jaxUtils.py
# pattern: a method decorator calls jax.jit(func, static_argnames=["self"])(self, ...) on each call; func is the decorated function, a stable object, so jit's cache is reused
# expect: no-flag
# family: placement
# strictness: hard
# run: [Dynamics().step(1.0, 2.0) for _ in range(2)]
import jax
import jax.numpy as jnp


def maybeJitCls(func):
    def _func(self, *args, **kwargs):
        if self.jittable:
            return jax.jit(func, static_argnames=["self"])(self, *args, **kwargs)
        return func(self, *args, **kwargs)

    return _func


class Dynamics:
    jittable = True

    def __hash__(self):
        return 0

    @maybeJitCls
    def step(self, x, u):
        return x + 0.1 * jnp.tanh(u)
