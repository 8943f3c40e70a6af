# source: https://github.com/dynamiqs/dynamiqs/pull/406
# pattern: a piecewise-constant time array's __call__ branches with `if t < self.times[0] or t >= self.times[-1]`; it is evaluated at a traced time inside a jitted solve
# expect: flag JAX301|JAX305
# family: control
# strictness: callgraph
# run: euler(jnp.ones(2), jnp.linspace(0, 1, 5))
import jax
import jax.numpy as jnp


class PWCFactor:
    def __init__(self, times, values):
        self.times = times
        self.values = values

    def __call__(self, t):
        if t < self.times[0] or t >= self.times[-1]:
            return jnp.zeros_like(self.values[..., 0])
        idx = jnp.searchsorted(self.times, t, side="right") - 1
        return self.values[..., idx]


H = PWCFactor(jnp.array([0.0, 1.0, 2.0]), jnp.ones((2, 2, 3)))


@jax.jit
def euler(y, ts):
    def step(y, t):
        return y + 0.01 * (H(t) @ y), None

    return jax.lax.scan(step, y, ts)[0]
