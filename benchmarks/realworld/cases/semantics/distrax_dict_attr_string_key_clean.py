# source: https://github.com/google-deepmind/distrax/blob/f51bffcf9094d269a0be8678762dd2849833c8b7/distrax/_src/utils/jittable_test.py#L59-L70
# pattern: a jittable object keeps its arrays in a dict attribute and a jitted function updates `obj.data['params'] *= 3`: a string key stores into the dict, not into an immutable array
# expect: no-flag
# family: semantics
# strictness: hard
# run: inner_fn(DummyJittable(jnp.ones(5)))
import jax
import jax.numpy as jnp


@jax.tree_util.register_pytree_node_class
class DummyJittable:
    def __init__(self, params):
        self.data = {"params": params}

    def tree_flatten(self):
        return (self.data,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        obj = cls.__new__(cls)
        obj.data = children[0]
        return obj


@jax.jit
def inner_fn(obj):
    obj.data["params"] *= 3
    return obj.data["params"].sum()
