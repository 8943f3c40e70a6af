"""Stub bodies: a def whose body is only a docstring, `...`, `pass` or `raise NotImplementedError`.

An abstract property or method (`@property @abstractmethod def n(self) -> int: ...`) is never
what a read on a real instance runs: the class cannot be instantiated, and the read runs the
override of a subclass. So a stub says nothing about the value, and the overrides decide
(mlprt/feedbax@ff783a62:feedbax/task.py: `AbstractTask.n_validation_trials` is a stub, and
`SimpleReaches.n_validation_trials` returns `self.eval_n_directions * self.eval_grid_n ** 2`,
Python int fields). `is_stub` reads the libcst tree, `is_stub_ast` the stdlib one.
"""

from __future__ import annotations

import ast

import libcst as cst


def is_stub(node: cst.CSTNode) -> bool:
    """`node` is a `def` whose body is a stub (see the module docstring)."""
    if not isinstance(node, cst.FunctionDef):
        return False
    if isinstance(node.body, cst.SimpleStatementSuite):  # `def n(self) -> int: ...`
        return all(_stub_small(s) for s in node.body.body)
    return all(
        isinstance(stmt, cst.SimpleStatementLine) and all(_stub_small(s) for s in stmt.body) for stmt in node.body.body
    )


def is_docstring(stmt: cst.BaseStatement) -> bool:
    """`stmt` is a statement line of one string expression: a body's docstring when it comes first."""
    return (
        isinstance(stmt, cst.SimpleStatementLine)
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], cst.Expr)
        and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _stub_small(s: cst.BaseSmallStatement) -> bool:
    if isinstance(s, cst.Pass):
        return True
    if isinstance(s, cst.Expr):
        return isinstance(s.value, (cst.Ellipsis, cst.SimpleString, cst.ConcatenatedString))
    if isinstance(s, cst.Raise):
        exc = s.exc.func if isinstance(s.exc, cst.Call) else s.exc
        return isinstance(exc, cst.Name) and exc.value == "NotImplementedError"
    return False


def is_stub_ast(node: ast.AST) -> bool:
    """`is_stub` on the stdlib AST."""
    if type(node) is not ast.FunctionDef and type(node) is not ast.AsyncFunctionDef:
        return False
    for s in node.body:
        kind = type(s)
        if kind is ast.Pass:
            continue
        if (
            kind is ast.Expr
            and type(s.value) is ast.Constant
            and (s.value.value is Ellipsis or isinstance(s.value.value, str))
        ):
            continue
        if kind is ast.Raise:
            exc = s.exc.func if type(s.exc) is ast.Call else s.exc
            if type(exc) is ast.Name and exc.id == "NotImplementedError":
                continue
        return False
    return True
