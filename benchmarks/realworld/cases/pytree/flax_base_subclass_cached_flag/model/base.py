import jax
from flax import struct


class SampledState(struct.PyTreeNode):
    samples: jax.Array
    n_accepted: jax.Array
