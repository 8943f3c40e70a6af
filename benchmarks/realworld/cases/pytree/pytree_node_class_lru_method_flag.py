# source: https://github.com/jax-ml/jax/issues/15338
# pattern: @register_pytree_node_class class whose method is wrapped in functools.lru_cache: the cache keys on self and outlives traces
# expect: flag JAX102
# family: pytree
# strictness: strict
import functools

import jax
from jax.tree_util import register_pytree_node_class


@register_pytree_node_class
class Sampler:
    def __init__(self, scale):
        self.scale = scale

    @functools.lru_cache(maxsize=None)
    def do(self, key, shape):
        return self.scale * jax.random.uniform(key, shape)

    def tree_flatten(self):
        return (self.scale,), None

    @classmethod
    def tree_unflatten(cls, aux, leaves):
        return cls(*leaves)
