"""Which top-level functions of a module call back to the host from compiled code, on the stdlib
AST: a call of `transforms.SYNCHRONOUS_CALLBACKS` (`jax.debug.callback`, `jax.debug.print`,
`host_callback.id_tap`, jax_tqdm's `scan_tqdm`) anywhere in its body. A compiled program that
calls one returns only when it is done, so a clock read right after a call that runs it times the
work (JAX501 does not report it). Read by the project index (`pytrees.ModuleSummary.host_callers`):
JAX-DIPS/JAX-DIPS@<heldout27> `jax_dips/utils/inspect.py` `progress_bar` taps each epoch through
`host_callback.id_tap`, and the trainers that import it time a whole scanned training run.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from jaxfix.analysis import astscan
from jaxfix.analysis.transforms import SYNCHRONOUS_CALLBACKS

# the last names of the callbacks, to skip a module that calls none of them without qualifying names
_LAST_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in SYNCHRONOUS_CALLBACKS)


def host_callers(tree: ast.Module, qualify: Callable[[ast.AST], str | None]) -> frozenset[str]:
    """The module's top-level functions (by the def in effect at its end) whose body calls a
    host callback."""
    if not any(_calls_back(node, qualify) for node in astscan.nodes(tree) if type(node) is ast.Call):
        return frozenset()
    found: set[str] = set()
    for top in tree.body:
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.discard(top.name)
            if any(_calls_back(n, qualify) for n in ast.walk(top) if type(n) is ast.Call):
                found.add(top.name)
    return frozenset(found)


def _calls_back(call: ast.Call, qualify: Callable[[ast.AST], str | None]) -> bool:
    func = call.func
    last = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
    return last in _LAST_NAMES and qualify(func) in SYNCHRONOUS_CALLBACKS
