"""Node searches the compile-cost rules (JAX501-JAX503) share: the nodes of a kind in a function's
own body or anywhere under a node, and whether a function binds a name itself."""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.body_facts import assigned_names
from jaxfix.analysis.jit_contexts import FuncInfo
from jaxfix.analysis.scopes import param_names
from jaxfix.analysis.walk import TOKEN_TYPES, walk

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def own_nodes(node: cst.CSTNode, kind) -> list:
    """Nodes of `kind` in `node`, not descending into nested defs, lambdas or classes (the code that
    runs when `node` runs)."""
    return _collect(node, kind, enter_scopes=False)


def all_nodes(node: cst.CSTNode, kind) -> list:
    """Nodes of `kind` anywhere under `node` (itself included), in source order."""
    return _collect(node, kind, enter_scopes=True)


def _collect(node: cst.CSTNode, kind, *, enter_scopes: bool) -> list:
    collector = (_Collector if _may_be_token(kind) else _CollectorAboveTokens)(node, kind, enter_scopes)
    walk(node, collector)
    return collector.found


class _Collector(cst.CSTVisitor):
    """The nodes of `kind` under `root` in walk order, nested scopes entered or not. One class for
    every search, not a class made per call: a class is a reference cycle, and one made per call
    kept its search's nodes (and the file's tree through them) until the cyclic collector ran."""

    def __init__(self, root: cst.CSTNode, kind, enter_scopes: bool) -> None:
        self.root, self.kind, self.enter_scopes = root, kind, enter_scopes
        self.found: list = []

    def on_visit(self, n: cst.CSTNode) -> bool:
        if not self.enter_scopes and n is not self.root and isinstance(n, _SCOPES):
            return False
        if isinstance(n, self.kind):
            self.found.append(n)
        return True


class _CollectorAboveTokens(_Collector):
    """`_Collector` for a `kind` no token is (the calls, assignments, returns the rules look for):
    the walk leaves out the whitespace, comma and bracket nodes, more than half of them (the
    same nodes found, in the same order)."""

    tokens_unseen = True


def _may_be_token(kind) -> bool:
    """Whether a token node (`walk.TOKEN_TYPES`: whitespace, operators, brackets) may be of `kind`
    (a class or a tuple of classes, as `isinstance` takes them): `cst.CSTNode` is; `cst.Call` is not."""
    answer = _TOKEN_KINDS.get(kind)
    if answer is None:
        answer = _TOKEN_KINDS[kind] = any(issubclass(token, kind) for token in TOKEN_TYPES)
    return answer


_TOKEN_KINDS: dict = {}  # kind -> `_may_be_token(kind)`


def binds_locally(info: FuncInfo | None, name: str) -> bool:
    """`name` is a parameter or local of `info` or of a function enclosing it (so it is not the
    module-level name spelled the same)."""
    while info is not None:
        if name in param_names(info.node.params) or name in assigned_names(info.node):
            return True
        info = info.parent
    return False
