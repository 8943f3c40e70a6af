# source: https://github.com/pyro-ppl/numpyro/issues/1651
# pattern: a project `lazy_property` descriptor (caches into the instance __dict__) on a pytree distribution whose first touch happens under jit: tracer stored on the object
# expect: flag JAX101
# family: pytree
# strictness: hard
# run: TruncatedNormal(0.0, 1.0).log_norm
import jax
import jax.numpy as jnp
from jax.tree_util import register_pytree_node_class


class lazy_property:
    def __init__(self, wrapped):
        self.wrapped = wrapped

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return self
        value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


@register_pytree_node_class
class TruncatedNormal:
    def __init__(self, loc, low):
        self.loc, self.low = loc, low

    @lazy_property
    def log_norm(self):
        return jnp.log1p(-jax.scipy.stats.norm.cdf(self.low - self.loc))

    def tree_flatten(self):
        return (self.loc, self.low), None

    @classmethod
    def tree_unflatten(cls, aux, leaves):
        return cls(*leaves)
