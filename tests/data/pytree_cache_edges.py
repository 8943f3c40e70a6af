import functools
from functools import cached_property
import equinox as eqx
import jax
from flax import struct


class Empty(eqx.Module):
    """Only a docstring."""

    @cached_property
    def b(this):
        """doc"""
        return jax.numpy.ones(())


class OneLine(struct.PyTreeNode):
    a: float

    @cached_property
    def b(self): return self.a


def factory():
    class Inner(struct.PyTreeNode):
        a: float

        @functools.cached_property
        def b(self) -> float:
            return self.a * 2

    return Inner


@jax.tree_util.register_pytree_node_class
class Named:
    def __init__(self, a):
        self.a = a

    def tree_flatten(self):
        children = [self.a]
        aux = None
        return children, aux

    @classmethod
    def tree_unflatten(cls, aux, children):
        (a,) = children
        return cls(a)

    @cached_property
    def b(self):
        return self.a + 1


class WithCaches(struct.PyTreeNode):
    a: float

    def with_caches(self):
        return self

    @cached_property
    def b(self):
        return self.a
