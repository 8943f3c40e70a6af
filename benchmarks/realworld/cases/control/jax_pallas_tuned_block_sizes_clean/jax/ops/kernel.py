import jax
import jax.numpy as jnp

from jax.ops.tuned import get_tuned_block_sizes


def get_min_heads_per_blk(num_heads):
    return num_heads // 2 if num_heads % 2 == 0 else num_heads


@jax.jit
def attention(q, pages):
    num_heads = q.shape[1]
    heads_per_blk = get_min_heads_per_blk(num_heads)
    pages_per_blk, _ = get_tuned_block_sizes(heads_per_blk, pages.shape[0])
    return jnp.sum(q) * pages_per_blk
