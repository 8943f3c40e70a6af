# source: https://github.com/netket/netket/pull/835
# pattern: a flax struct dataclass validates a static (pytree_node=False) field in __post_init__ and is constructed inside jit: the check is on a Python int
# expect: no-flag
# family: control
# strictness: callgraph
# run: chain_means(jnp.ones((4,5)))
import jax
import jax.numpy as jnp
from flax import struct


@struct.dataclass
class ChainStats:
    samples: jax.Array
    n_chains: int = struct.field(pytree_node=False, default=1)

    def __post_init__(self):
        if self.n_chains < 1:
            raise ValueError("n_chains must be positive")
        if self.samples.ndim != 2:
            raise ValueError("samples must be (chains, steps)")


@jax.jit
def chain_means(samples):
    stats = ChainStats(samples, n_chains=4)
    return jnp.mean(stats.samples, axis=1)
