# source: https://github.com/google/brax/blob/HEAD/brax/pytree.py
# pattern: the same project-local `register` helper around register_pytree_node; the registered class only has plain methods and a plain @property, nothing is cached on the instance
# expect: no-flag
# family: pytree
# strictness: hard
# run: kick(Body(jnp.ones(2), jnp.zeros(2)), jnp.ones(2))
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

    @property
    def inv_mass(self):
        return 1.0 / self.mass


@jax.jit
def kick(body, force):
    return body.pos + force * body.inv_mass
