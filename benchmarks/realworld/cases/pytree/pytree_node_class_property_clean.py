# source: https://github.com/jax-ml/jax/issues/15338
# pattern: @register_pytree_node_class class with plain methods and a @property, called through a module-level jitted function
# expect: no-flag
# family: pytree
# strictness: strict
# run: draw(Sampler(1.0), key)
import jax
from jax.tree_util import register_pytree_node_class


@register_pytree_node_class
class Sampler:
    def __init__(self, scale):
        self.scale = scale

    @property
    def double(self):
        return 2 * self.scale

    def do(self, key, shape):
        return self.double * jax.random.uniform(key, shape)

    def tree_flatten(self):
        return (self.scale,), None

    @classmethod
    def tree_unflatten(cls, aux, leaves):
        return cls(*leaves)


@jax.jit
def draw(sampler, key):
    return sampler.do(key, (2, 3))
