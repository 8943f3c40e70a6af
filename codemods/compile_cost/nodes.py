"""Node searches the compile-cost rules (JAX501-JAX503) share: the nodes of a kind in a function's
own body or anywhere under a node, and whether a function binds a name itself."""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.body_facts import assigned_names
from jaxfix.analysis.jit_contexts import FuncInfo
from jaxfix.analysis.scopes import param_names
from jaxfix.analysis.walk import walk

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def own_nodes(node: cst.CSTNode, kind) -> list:
    """Nodes of `kind` in `node`, not descending into nested defs, lambdas or classes (the code that
    runs when `node` runs)."""
    return _collect(node, kind, enter_scopes=False)


def all_nodes(node: cst.CSTNode, kind) -> list:
    """Nodes of `kind` anywhere under `node` (itself included), in source order."""
    return _collect(node, kind, enter_scopes=True)


def _collect(node: cst.CSTNode, kind, *, enter_scopes: bool) -> list:
    out = []

    class V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if not enter_scopes and n is not node and isinstance(n, _SCOPES):
                return False
            if isinstance(n, kind):
                out.append(n)
            return True

    walk(node, V())
    return out


def binds_locally(info: FuncInfo | None, name: str) -> bool:
    """`name` is a parameter or local of `info` or of a function enclosing it (so it is not the
    module-level name spelled the same)."""
    while info is not None:
        if name in param_names(info.node.params) or name in assigned_names(info.node):
            return True
        info = info.parent
    return False
