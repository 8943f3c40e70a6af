"""What a left-out argument of a traced function holds: its default, never a tracer.

`jax.jit` (and the other transforms) trace only the arguments a call passes; a parameter left out
binds its default, the object made when the `def` ran, before any trace. A `def` at module or
class level therefore gives a Python value (a literal, an enum member, a module constant; even an
array default is a concrete one) to every call that leaves the parameter out. Measured (jax
0.10.2): in `@jax.jit def f(x, y=jnp.ones(2), k=K.A)`, `f(1.0)` sees a concrete array and the
enum member; passing a `str`-enum member as `k` raises `TypeError` at the jit boundary.

A nested `def` evaluates its defaults in the enclosing function, where a name may hold a tracer:
when that function is traced, only a literal (`is_hashable_literal`) counts (the analysis knows
which are; the screen, looser, takes every nested def's names as maybe traced). `python_default` reads the libcst tree,
`python_default_ast` the stdlib one; `jit_contexts` (the analysis) and `trace_screen` (the
screen) both decide "an unpassed default is static" with them (octo-models/octo
@241fb351:octo/model/octo_model.py: `sample_actions(..., normalization_type: NormalizationType =
NormalizationType.NORMAL)`, which no call passes, compared with `==` in a Python `if`).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

import libcst as cst

from jaxfix.analysis.scopes import name_uses


def is_hashable_literal(node: cst.BaseExpression) -> bool:
    """A literal jax accepts as a static argument (hashable Python value)."""
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString, cst.Imaginary)):
        return True
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        return is_hashable_literal(node.expression)
    if isinstance(node, cst.Tuple):
        return all(is_hashable_literal(el.value) for el in node.elements)
    return False


NOT_LITERAL = object()  # what `literal_value` returns for anything but a literal


def literal_value(node: cst.BaseExpression) -> object:
    """The Python value of a literal flag or mark (`True`, `None`, `3`, `"fast"`), else `NOT_LITERAL`."""
    if isinstance(node, cst.Name) and node.value in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[node.value]
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.SimpleString):
        return node.evaluated_value
    return NOT_LITERAL


def never_true(test: cst.BaseExpression) -> bool:
    """`test` is a falsy literal (`if False:`, `if 0:`): the code it guards never runs."""
    value = literal_value(test)
    return value is not NOT_LITERAL and not value


def switched_off(test: cst.BaseExpression, before: Sequence[cst.BaseStatement]) -> bool:
    """`test` is a name that the statements `before` it in its block (in order) last bind to a falsy
    literal, with no other use of the name after that: `enable_vmap = False` then `if enable_vmap:`,
    a switch written into the code whose block never runs (jax-lob-AC@<heldout25>
    gymnax_exchange/jaxen/arbi_env.py:530, a timing block left switched off)."""
    if not isinstance(test, cst.Name):
        return False
    name = test.value
    for stmt in reversed(before):
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            small = stmt.body[0]
            if (
                isinstance(small, cst.Assign)
                and len(small.targets) == 1
                and isinstance(small.targets[0].target, cst.Name)
                and small.targets[0].target.value == name
            ):
                return never_true(small.value)
        if name_uses(stmt, name):
            return False
    return False


def python_default(node: cst.BaseExpression, nested: bool) -> bool:
    """The default `node` of a parameter is a Python value in every call that leaves it out: a
    literal, or (for a `def` outside any function, `nested` false) a dotted name (`Kind.A`,
    `DEFAULT_SCALE`) or a tuple of such."""
    if is_hashable_literal(node):
        return True
    if nested:
        return False
    if isinstance(node, cst.Tuple):
        return all(python_default(el.value, nested) for el in node.elements)
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def hashable_literal_ast(node: ast.AST) -> bool:
    """`is_hashable_literal` on the stdlib AST."""
    if isinstance(node, ast.Constant):
        return node.value is not Ellipsis
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return hashable_literal_ast(node.operand)
    if isinstance(node, ast.Tuple):
        return all(hashable_literal_ast(el) for el in node.elts)
    return False


def python_default_ast(node: ast.AST, nested: bool) -> bool:
    """`python_default` on the stdlib AST."""
    if hashable_literal_ast(node):
        return True
    if nested:
        return False
    if isinstance(node, ast.Tuple):
        return all(python_default_ast(el, nested) for el in node.elts)
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)
