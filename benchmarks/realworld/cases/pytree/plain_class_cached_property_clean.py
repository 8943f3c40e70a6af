# source: https://github.com/rigetti/pyquil/pull/1860
# pattern: cached_property on a plain frozen dataclass that is not a pytree, forced eagerly in __post_init__ (the thread's GoodEager rule)
# expect: no-flag
# family: pytree
# strictness: hard
# run: Simulator(3).table
from dataclasses import dataclass
from functools import cached_property

import jax.numpy as jnp


def force_cached_properties(obj):
    for klass in type(obj).__mro__:
        for name, attr in vars(klass).items():
            if isinstance(attr, cached_property):
                getattr(obj, name)


@dataclass(frozen=True, eq=False)
class Simulator:
    n: int

    @cached_property
    def table(self):
        return jnp.eye(self.n) * 3.0

    def __post_init__(self):
        force_cached_properties(self)
