# source: https://github.com/vicariousinc/PGMax/blob/d5b672ef501c6263028ab0d6f5e36af1bea239dd/pgmax/utils.py
# pattern: a project-local `cached_property = property(functools.lru_cache(None)(func))` on a class registered by a project-local register_pytree_node_dataclass helper
# expect: flag JAX101|JAX102
# family: pytree
# strictness: hard
# run: FactorMessages(jnp.ones(3)).normalised
import dataclasses
import functools

import jax
import jax.numpy as jnp


def cached_property(func):
    return property(functools.lru_cache(None)(func))


def register_pytree_node_dataclass(cls):
    def _flatten(obj):
        return jax.tree_util.tree_flatten(dataclasses.asdict(obj))

    def _unflatten(d, children):
        return cls(**d.unflatten(children))

    jax.tree_util.register_pytree_node(cls, _flatten, _unflatten)
    return cls


@register_pytree_node_dataclass
@dataclasses.dataclass(frozen=True, eq=False)
class FactorMessages:
    log_potentials: jax.Array

    @cached_property
    def normalised(self):
        return self.log_potentials - jax.nn.logsumexp(self.log_potentials)
