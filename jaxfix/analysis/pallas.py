"""Pallas kernels: the functions a module hands to `pl.pallas_call` (or `pl.kernel`).

A kernel's parameters are mutable Refs, not arrays: `o_ref[...] = value` is how a kernel writes
its output, and `x_ref[...]` how it reads its input (JAX's Pallas quickstart), so an item store
into one is no in-place update of an immutable array. Read on the stdlib AST by the JAX403 screen
and rule alike.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from jaxfix.analysis import astscan

# the calls whose function argument runs on Refs: `pallas_call(kernel, out_shape, ...)`,
# `pl.kernel(body, out_shape=..., mesh=...)`
KERNEL_CALLS = frozenset(
    {
        "jax.experimental.pallas.pallas_call",
        "jax.experimental.pallas.kernel",
        "jax._src.pallas.pallas_call.pallas_call",
    }
)
_KERNEL_KEYWORDS = ("kernel", "body")


def kernel_names(tree: ast.Module, qualify: Callable[[ast.AST], str | None]) -> frozenset[str]:
    """Names of the functions `tree` passes to a Pallas call as its kernel (`pallas_call(k, ...)`,
    `pallas_call(partial(k, n=2), ...)`, `pallas_call(self._k, ...)`: `k`, `_k`), or decorates
    with one (`@partial(pl.pallas_call, out_shape=...)`). By name: a def of that name anywhere in
    the module counts."""
    found: set[str] = set()
    for call in astscan.calls(tree):
        if qualify(call.func) not in KERNEL_CALLS:
            continue
        arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg in _KERNEL_KEYWORDS), None)
        while isinstance(arg, ast.Call) and qualify(arg.func) == "functools.partial" and arg.args:
            arg = arg.args[0]
        if isinstance(arg, ast.Name):
            found.add(arg.id)
        elif isinstance(arg, ast.Attribute):
            found.add(arg.attr)
    for node in astscan.statements(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            isinstance(d, ast.Call)
            and (qualify(d.func) in KERNEL_CALLS or (qualify(d.func) == "functools.partial" and d.args and qualify(d.args[0]) in KERNEL_CALLS))
            for d in node.decorator_list
        ):
            found.add(node.name)
    return frozenset(found)
