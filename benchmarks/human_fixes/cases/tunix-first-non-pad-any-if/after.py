# Trimmed from google/tunix@210a20da203a:tunix/generate/utils.py (Apache-2.0); see case.toml.
import functools
import jax
from jax import lax
import jax.numpy as jnp

def find_first_non_pad_idx(ids, pad_id):
  """Finds the index of the first non-pad token."""
  mask = ids != pad_id

  return lax.cond(
      jnp.any(mask),
      lambda operands: jnp.argmax(operands[0]),
      lambda operands: 0,
      (mask,),
  )

def find_first_eos_idx(ids, eos_id):
  """Finds the index of the first EOS token."""
  mask = ids == eos_id

  return lax.cond(
      jnp.any(mask),
      lambda operands: jnp.argmax(operands[0]),
      lambda operands: operands[1].shape[0],
      (mask, ids),
  )
