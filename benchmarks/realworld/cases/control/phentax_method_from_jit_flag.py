# source: https://github.com/asantini29/phentax/pull/28
# pattern: an undecorated method does int(jnp.ceil(T / delta_t)) and `assert jnp.all(...)`; it is only ever called from a jitted method via self
# expect: flag JAX304 JAX301|JAX305
# family: control
# strictness: callgraph
# run: IMRPhenomT(0.1)(1.0, jnp.zeros(2))
import jax
import jax.numpy as jnp


class IMRPhenomT:
    def __init__(self, delta_t):
        self.delta_t = delta_t

    def initial_processing(self, T, spins):
        assert jnp.all(jnp.abs(spins) <= 1.0), "spins out of bounds"
        n = int(jnp.ceil(T / self.delta_t))
        return n

    def waveform(self, T, spins):
        n = self.initial_processing(T, spins)
        return jnp.zeros(n)

    def __call__(self, T, spins):
        return jax.jit(self.waveform)(T, spins)
