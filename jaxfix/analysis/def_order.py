"""Which of several module-level defs of one name a reference means: the last one above it.

A notebook (and, rarely, a module) redefines a function: probml's jax_intro has a dozen `def f`,
TF_JAX_tutorials jits `multiply_n_times` in one cell and redefines it as a plain Python driver in a
later one. `jit_contexts` keeps one def per name (the last), so a `jax.jit(f)` written under the
first def marks the last one, which nothing transforms. The top level runs in order: a reference in
a top-level statement means the def of that name last executed above it; one inside a function or
class body runs when that is called, and its def is not known from order alone.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst


class DefOrder:
    """The module-level defs of each name, in order, to tell which one a reference means."""

    def __init__(self, module: cst.Module, top_level_statement: Callable[[cst.CSTNode], cst.CSTNode | None]) -> None:
        self._top = top_level_statement
        self._index = {id(stmt): i for i, stmt in enumerate(module.body)}
        self._defs: dict[str, list[int]] = {}
        for i, stmt in enumerate(module.body):
            if isinstance(stmt, cst.FunctionDef):
                self._defs.setdefault(stmt.name.value, []).append(i)

    def shadowed(self, node: cst.CSTNode) -> bool:
        """`node` is a top-level def whose name another top-level def binds too."""
        return isinstance(node, cst.FunctionDef) and id(node) in self._index and len(self._defs[node.name.value]) > 1

    def may_mean(self, node: cst.FunctionDef, reference: cst.CSTNode) -> bool:
        """Whether `reference` (a call or decorator naming `node`'s name) can mean the def `node`:
        always for one of its own decorators or one inside a function or class body (it runs when
        called); for one in a top-level statement, only when `node` is the last def above it."""
        stmt = self._top(reference)
        if stmt is None or stmt is node or isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return True
        here = self._index.get(id(stmt))
        if here is None:
            return True
        above = [i for i in self._defs.get(node.name.value, ()) if i < here]
        return bool(above) and above[-1] == self._index[id(node)]
