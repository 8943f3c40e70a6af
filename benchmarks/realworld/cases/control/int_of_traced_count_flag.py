# source: https://github.com/jax-ml/jax/issues/6350
# pattern: int() of an argument that jit traces (segment count passed positionally to a jitted wrapper)
# expect: flag JAX304
# family: control
# strictness: strict
# run: segment_totals(jnp.ones((4,2)), jnp.array([0,1,0,1]), 2)
import jax
import jax.numpy as jnp


@jax.jit
def segment_totals(data, segment_ids, num_segments):
    num_segments = int(num_segments)
    out = jnp.zeros((num_segments,) + data.shape[1:], data.dtype)
    return out.at[segment_ids].add(data)
