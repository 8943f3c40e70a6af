"""Trace-time semantics: Python that runs once, when a function is traced, not at every call.

- JAX401 `print-in-traced-code` (print_in_traced_code.py): `print` of a traced value.
- JAX402 `numpy-on-traced-value` (numpy_on_traced_value.py): a NumPy function on a traced value;
  its measured table is numpy_table.py.
- JAX403 `in-place-update-on-traced-array` (in_place_update_on_traced_array.py): `x[i] = v` on a
  traced JAX array; its fast screen on the stdlib AST is in_place_screen.py.
- JAX404 `outer-state-mutation-in-traced-code` (outer_state_mutation_in_traced_code.py): a side
  effect on state outside the traced function.
- JAX405 `host-read-in-traced-code` (host_read_in_traced_code.py): a read of the host's clock or
  global random state, baked into the compiled program at trace time.

`common.py` holds what they share: the traced functions of a file, and the wording and layout of
findings and fixes.
"""

from __future__ import annotations

from codemods._command import commands_in_modules

# The libcst commands of the single module this package replaces keep their names
# (`python -m libcst.tool codemod trace_time_semantics.PrintInTracedCodeCommand`).
__getattr__ = commands_in_modules(
    __name__,
    {
        "PrintInTracedCodeCommand": "print_in_traced_code",
        "NumpyOnTracedValueCommand": "numpy_on_traced_value",
        "InPlaceUpdateCommand": "in_place_update_on_traced_array",
        "OuterStateMutationCommand": "outer_state_mutation_in_traced_code",
    },
)
