"""Which JAX101 evidence paths report by default and which only in preview (`--preview`, issue #29).

Taken from first-contact data: the 77 JAX101 label rows of the thirteen spent blind pools
(`benchmarks/blind/labels/*.tsv`, rows of findings that vanished since included), split by what
showed the class a pytree read under a trace and by what the cached value is (`cached_value`):

- an array (its annotation, `jnp` returns, arithmetic on array fields), on an NNX module or on a
  pytree read under a trace on a persistent instance: default. 22 real of 24 (2 debatable: a
  vision tower's table the text-only jit never reaches), all on one pool (heldout, EasyDeL's RoPE
  tables); kept default because it is the tracer-in-the-cache hazard itself (the README's
  `examples/pytree_cache.py`, `examples/nnx_pytree_cache.py`), not a guess about it.
- a value this file cannot tell is an array or a Python object: preview. 0 real of 4 (EasyDeL
  `base_module.py:723,764,785`, `_flexible.py:827`: a loss-type string, a loss function, a quantizer
  object, rebuilt once per trace and never a tracer).
- a plain Python value, a property nothing reads, a pytree with no persistent read: not reported
  (0 real of the other 49 rows, on heldout2, heldout3, heldout5, heldout9).
"""

from __future__ import annotations

import dataclasses

from codemods.pytree_cache.cached_value import ARRAY_VALUE
from jaxfix.model import Finding


def cached_property_finding(finding: Finding, value: str) -> Finding:
    """JAX101: default when the cached value is certainly an array, preview otherwise."""
    if value == ARRAY_VALUE or finding.preview:
        return finding
    return dataclasses.replace(finding, preview=True)
