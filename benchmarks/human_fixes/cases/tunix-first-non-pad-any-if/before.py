# Trimmed from google/tunix@e2a984b3c009:tunix/generate/utils.py (Apache-2.0); see case.toml.
import jax
import jax.numpy as jnp

def find_first_non_pad_idx(ids, pad_id):
  """Finds the index of the first non-pad token."""
  mask = ids != pad_id
  if jnp.any(mask):
    return jnp.argmax(mask)
  else:
    return 0

def find_first_eos_idx(ids, eos_id):
  """Finds the index of the first EOS token."""
  mask = ids == eos_id
  if jnp.any(mask):
    return jnp.argmax(mask)
  else:
    return ids.shape[0]
