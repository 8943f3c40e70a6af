# source: https://github.com/netket/netket/pull/835
# pattern: flax.struct.dataclass (a pytree) with a functools.cached_property for a derived mean: the cache is dropped at each jit boundary and can hold a tracer (session 17: passed as an argument, the instance is rebuilt from its leaves inside the trace and its cache dies there; what leaks a tracer is the closed-over instance read under jit at the end, which JAX101 needs on a non-NNX pytree)
# expect: flag JAX101
# family: pytree
# strictness: strict
# run: centred(Stats(jnp.arange(3.)))
from functools import cached_property

import jax
import jax.numpy as jnp
from flax import struct


@struct.dataclass
class Stats:
    samples: jax.Array

    @cached_property
    def mean(self):
        return jnp.mean(self.samples)


@jax.jit
def centred(stats):
    return stats.samples - stats.mean


def centred_on(reference: Stats):
    return jax.jit(lambda samples: samples - reference.mean)
