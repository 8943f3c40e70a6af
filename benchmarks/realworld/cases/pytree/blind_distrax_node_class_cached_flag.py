# source: https://github.com/google-deepmind/distrax/issues/162
# pattern: a `register_pytree_node_class` distribution caches log(scale) with functools.cached_property; first touched inside a jitted closure it stores a tracer on the instance
# expect: flag JAX101
# family: pytree
# strictness: strict
# run: (module-level code)
import functools

import jax
import jax.numpy as jnp


@jax.tree_util.register_pytree_node_class
class Normal:
    def __init__(self, loc, scale):
        self.loc = loc
        self.scale = scale

    @functools.cached_property
    def log_scale(self):
        return jnp.log(self.scale)

    def log_prob(self, x):
        z = (x - self.loc) / self.scale
        return -0.5 * z**2 - self.log_scale

    def tree_flatten(self):
        return (self.loc, self.scale), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


dist = Normal(jnp.zeros(3), jnp.ones(3))
density = jax.jit(lambda x: dist.log_prob(x))(jnp.ones(3))
