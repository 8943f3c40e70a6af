# source: https://github.com/jax-ml/jax/issues/15338
# pattern: @register_pytree_node_class class whose method is wrapped in functools.lru_cache: the cache keys on self (a fresh object per trace, holding tracers) and outlives traces
# expect: flag JAX102
# family: pytree
# strictness: strict
# run: Sampler(1.0).table(3)
import functools

import jax
from jax.tree_util import register_pytree_node_class


@register_pytree_node_class
class Sampler:
    def __init__(self, scale):
        self.scale = scale

    @functools.lru_cache(maxsize=None)
    def table(self, n):
        return self.scale * jax.numpy.arange(n)

    def do(self, key, n):
        return self.table(n) * jax.random.uniform(key, (n,))

    def tree_flatten(self):
        return (self.scale,), None

    @classmethod
    def tree_unflatten(cls, aux, leaves):
        return cls(*leaves)
