# source: https://github.com/netket/netket/pull/835
# pattern: the derived quantity is computed once by a classmethod constructor and stored as a pytree field, instead of a cached property
# expect: no-flag
# family: pytree
# strictness: strict
# run: centred(Stats.from_samples(jnp.arange(3.)))
import jax
import jax.numpy as jnp
from flax import struct


@struct.dataclass
class Stats:
    samples: jax.Array
    mean: jax.Array
    n_chains: int = struct.field(pytree_node=False, default=1)

    @classmethod
    def from_samples(cls, samples, n_chains=1):
        return cls(samples=samples, mean=jnp.mean(samples), n_chains=n_chains)


@jax.jit
def centred(stats):
    return stats.samples - stats.mean
