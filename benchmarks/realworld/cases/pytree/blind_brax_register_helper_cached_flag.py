# source: https://github.com/google/brax/blob/HEAD/brax/pytree.py
# pattern: the project rolls its own `register` decorator around jax.tree_util.register_pytree_node; a class it registers caches a derived array with functools.cached_property
# expect: flag JAX101
# family: pytree
# strictness: hard
# run: (module-level code)
import functools

import jax
import jax.numpy as jnp


def register(cls):
    def flatten(obj):
        keys = sorted(vars(obj))
        return [getattr(obj, k) for k in keys], keys

    def unflatten(keys, children):
        obj = cls.__new__(cls)
        for k, v in zip(keys, children):
            setattr(obj, k, v)
        return obj

    jax.tree_util.register_pytree_node(cls, flatten, unflatten)
    return cls


@register
class Body:
    def __init__(self, mass, pos):
        self.mass = mass
        self.pos = pos

    @functools.cached_property
    def inv_mass(self):
        return 1.0 / self.mass

    def kick(self, force):
        return self.pos + force * self.inv_mass


body = Body(jnp.ones(2), jnp.zeros(2))
moved = jax.jit(lambda f: body.kick(f))(jnp.ones(2))
