# source: https://github.com/pyro-ppl/numpyro/pull/1976
# pattern: a guide object caches plates on `self` inside __call__, and the guide is called under jax.jit(lambda: ...): the attribute keeps tracers
# expect: flag JAX404
# family: semantics
# strictness: callgraph
# run: (module-level code)
import jax
import jax.numpy as jnp


class AutoDelta:
    def __init__(self, size):
        self.size = size
        self.plates = {}

    def _setup(self, key):
        self.plates["n"] = jax.random.permutation(key, jnp.arange(self.size))

    def __call__(self, key):
        self._setup(key)
        return self.plates["n"] * 2


guide = AutoDelta(2)
out = jax.jit(lambda k: guide(k))(jax.random.PRNGKey(9))
