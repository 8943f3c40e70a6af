"""Which JAX4xx evidence paths report by default and which only in preview (`--preview`, issue #29).

One place for the decision, taken from first-contact data: every label row of the thirteen spent
blind pools (`benchmarks/blind/labels/*.tsv`, rows of findings that vanished since included: what
a tool said about code it had never seen). A path whose first-contact findings were mostly wrong
or debatable on two or more pools, or that never occurred on two, is preview; the figures are
real/labelled, with the pools each path was wrong on. Published code that runs cannot contain a
crash it reaches, so where a rule reports a crash on it, the analysis has usually missed why the
value is concrete: the crash paths that stay default are those whose evidence needs no trace.

- JAX401 `print` of a traced value: default (16 real of 20; 3 debatable: a whole batch printed
  for its shapes; 1 wrong: an eager debug loop; on six pools).
- JAX401 a `logging` call given a traced value: preview (1 real of 5; wrong on heldout,
  heldout3, heldout9: a dtype, `variables.keys()`, strings of shapes, which code logs at trace
  time on purpose; debatable on heldout3).
- JAX402 every path: preview (1 real of 26, on ten repositories of eight pools: static fields,
  an argument in_axes=None leaves concrete, a host-side collator, guarded checks,
  `__array_ufunc__` wrappers; the one real, bonsai `model_sam2_transforms.py:123`, is unreached).
- JAX403 a store into a name every binding of which is a `jax.numpy` constructor in the same
  function (`x = jnp.zeros(n); x[i] = v`): default (28 real of 28 on four pools; it raises
  `TypeError` traced or not).
- JAX403 a store into a traced parameter or a value derived from one: preview (0 real of 8 on five
  pools: a NumPy array, a Pallas Ref, a Python list, an `nnx.Variable`).
- JAX404 every path: preview (8 real of 81 on eleven pools). Stale reads of a rebound module
  global: 7 real of about 70 (notebooks that redefine the function with the rebinding, retrace
  on a new structure, or rebind to an equal value); writes to outer state: 1 real of 9 (a treedef,
  a graph structure or a tag counter recorded at trace time on purpose).
"""

from __future__ import annotations

import dataclasses

from jaxfix.model import Finding


def _preview(finding: Finding | None, preview: bool) -> Finding | None:
    if finding is None or not preview or finding.preview:
        return finding
    return dataclasses.replace(finding, preview=True)


def print_finding(finding: Finding, logged: bool) -> Finding:
    """JAX401: a `print` is default, a logging call preview."""
    return _preview(finding, logged)


def numpy_finding(finding: Finding | None) -> Finding | None:
    """JAX402: preview on every path."""
    return _preview(finding, True)


def in_place_finding(finding: Finding | None, constructed: bool) -> Finding | None:
    """JAX403: default when the array is made by a `jax.numpy` constructor in the function itself
    (`eager_arrays`), preview when it is a traced parameter or derived from one."""
    return _preview(finding, not constructed)


def outer_state_finding(finding: Finding | None) -> Finding | None:
    """JAX404: preview on every path."""
    return _preview(finding, True)
