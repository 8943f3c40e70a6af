"""pytree_nodes Dataclasses."""

import dataclasses

import jax


def register_pytree_node(cls):
    """Decorator to register dataclasses as pytree_nodes."""
    cls = dataclasses.dataclass()(cls)
    flatten = lambda obj: jax.tree_util.tree_flatten(dataclasses.asdict(obj))  # noqa: E731
    unflatten = lambda d, children: cls(**d.unflatten(children))  # noqa: E731
    jax.tree_util.register_pytree_node(cls, flatten, unflatten)
    return cls
