# source: https://github.com/Obs01ete/jax_automl/blob/HEAD/dataclass_jax.py
# pattern: a same-file helper `register_pytree_node_dataclass` (register_pytree_node over dataclasses.asdict) makes the class a pytree; it carries a functools.cached_property (session 17: passed as an argument, the instance is rebuilt from its leaves inside the trace and its cache dies there; what leaks a tracer is the closed-over instance read under jit at the end, which JAX101 needs on a non-NNX pytree)
# expect: flag JAX101
# family: pytree
# strictness: hard
# run: fitness(Genome(jnp.ones(3)))
import dataclasses
from functools import cached_property

import jax
import jax.numpy as jnp


def register_pytree_node_dataclass(cls):
    _flatten = lambda obj: jax.tree_util.tree_flatten(dataclasses.asdict(obj))  # noqa: E731
    _unflatten = lambda d, children: cls(**d.unflatten(children))  # noqa: E731
    jax.tree_util.register_pytree_node(cls, _flatten, _unflatten)
    return cls


@register_pytree_node_dataclass
@dataclasses.dataclass
class Genome:
    widths: jax.Array

    @cached_property
    def total(self):
        return jnp.sum(self.widths)


@jax.jit
def fitness(genome):
    return genome.total / genome.widths.shape[0]


BASELINE = Genome(jnp.ones(3))
relative_fitness = jax.jit(lambda genome: fitness(genome) / BASELINE.total)
