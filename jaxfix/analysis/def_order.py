"""Which of several module-level defs of one name a reference means: the last one above it.

A notebook (and, rarely, a module) redefines a function: probml's jax_intro has a dozen `def f`,
TF_JAX_tutorials jits `multiply_n_times` in one cell and redefines it as a plain Python driver in a
later one. `jit_contexts` keeps one def per name (the last), so a `jax.jit(f)` written under the
first def marks the last one, which nothing transforms. The top level runs in order: a reference in
a top-level statement means the def of that name last executed above it; one inside a function or
class body runs when that is called, and its def is not known from order alone. A function body
runs in order too: two nested `def body` in one function, the first handed to `lax.scan` before
the second is defined and mapped over a tree's key paths (zjjMaiMai/GumbelAlphaZero@36e9a56
main.py:123, heldout21: the key-path `body` was taken for the scanned one), are told apart the same
way within their block (`parent` given).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst


class DefOrder:
    """The defs of each name in a block (the module, or a function body when `parent` is given), in
    order, to tell which one a reference means."""

    def __init__(
        self,
        module: cst.Module,
        top_level_statement: Callable[[cst.CSTNode], cst.CSTNode | None],
        parent: Callable[[cst.CSTNode], cst.CSTNode | None] | None = None,
    ) -> None:
        self._top = top_level_statement
        self._parent = parent
        self._module = module
        self._tables: dict[int, tuple[dict[int, int], dict[str, list[int]]]] = {}

    def _table(self, block: cst.CSTNode) -> tuple[dict[int, int], dict[str, list[int]]]:
        """(statement id -> position, name -> positions of its defs) of a module or indented block."""
        key = id(block)
        if key not in self._tables:
            body = block.body if isinstance(block, (cst.Module, cst.IndentedBlock)) else ()
            index = {id(stmt): i for i, stmt in enumerate(body)}
            defs: dict[str, list[int]] = {}
            for i, stmt in enumerate(body):
                if isinstance(stmt, cst.FunctionDef):
                    defs.setdefault(stmt.name.value, []).append(i)
            self._tables[key] = (index, defs)
        return self._tables[key]

    def _block(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The module or the indented function body `node` is a statement of (None otherwise)."""
        if self._parent is None:
            return self._module if id(node) in self._table(self._module)[0] else None
        block = self._parent(node)
        if isinstance(block, cst.Module):
            return block
        if isinstance(block, cst.IndentedBlock) and isinstance(self._parent(block), cst.FunctionDef):
            return block
        return None

    def shadowed(self, node: cst.CSTNode) -> bool:
        """`node` is a def whose name another def of the same block binds too."""
        if not isinstance(node, cst.FunctionDef):
            return False
        block = self._block(node)
        return block is not None and len(self._table(block)[1].get(node.name.value, ())) > 1

    def may_mean(self, node: cst.FunctionDef, reference: cst.CSTNode) -> bool:
        """Whether `reference` (a call or decorator naming `node`'s name) can mean the def `node`:
        always for one of its own decorators or one inside a function or class body of the block (it
        runs when called); for one in a statement of the block, only when `node` is the last def
        above it."""
        block = self._block(node)
        if block is None:
            return True
        stmt = self._statement_of(reference, block)
        if stmt is None or stmt is node or isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            return True
        index, defs = self._table(block)
        here = index.get(id(stmt))
        if here is None:
            return True
        above = [i for i in defs.get(node.name.value, ()) if i < here]
        return bool(above) and above[-1] == index[id(node)]

    def _statement_of(self, reference: cst.CSTNode, block: cst.CSTNode) -> cst.CSTNode | None:
        """The statement of `block` that holds `reference`."""
        if self._parent is None or isinstance(block, cst.Module):
            return self._top(reference)
        node: cst.CSTNode | None = reference
        while node is not None:
            up = self._parent(node)
            if up is block:
                return node
            node = up
        return None
