"""Syntax that shows a value inside traced code is a Python object, not an array.

`traced.FunctionFacts` decides most values by what flows into them; these are the facts it reads
off the code alone, whatever is traced: a text literal (`key == "pixels"` compares strings), an
annotation that declares a tuple or list (whose truth is its length), a parameter annotated as a
callable returning Python data (`predicate: Callable[[Var], bool]`), a name the function reads a
non-array attribute of (it holds an object), and an attribute read off an object whose class the
file shows (`read_off_known`, for the proof's field reads). `screen_function` reads the same
sequence annotations (`SEQUENCE_TYPES`) on the stdlib AST.
"""

from __future__ import annotations

from collections.abc import Callable, Container

import libcst as cst

from jaxfix.analysis.body_facts import assigned_names, target_names
from jaxfix.analysis.names import ImportMap, dotted_name
from jaxfix.analysis.pytrees import VARIABLE_VALUE_ATTRIBUTES
from jaxfix.analysis.static_values import ARRAY_ATTRIBUTES, admits_no_array
from jaxfix.analysis.walk import walk

SEQUENCE_TYPES = frozenset({"tuple", "Tuple", "list", "List", "Sequence", "MutableSequence"})
_CALLABLES = frozenset({"typing.Callable", "collections.abc.Callable"})


def is_str_literal(e: cst.BaseExpression) -> bool:
    """A text literal (not bytes): what it is compared with is a Python `str`, never a tracer."""
    return isinstance(e, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)) and not (
        isinstance(e, cst.SimpleString) and "b" in e.prefix.lower()
    )


def annotation_is_sequence(names: ImportMap, ann: cst.BaseExpression) -> bool:
    """`ann` (`Sequence[int]`, `tuple[...]`, `list`) declares a Python tuple or list."""
    if isinstance(ann, cst.Subscript):
        ann = ann.value
    qual = names.qualify(ann) or ""
    return qual.rsplit(".", 1)[-1] in SEQUENCE_TYPES


def python_callable_params(
    node: cst.FunctionDef | cst.Lambda, qualify: Callable[[cst.BaseExpression], str | None]
) -> frozenset[str]:
    """Parameters annotated as callables returning a Python value (`predicate: Callable[[Var],
    bool]`, penzai's `unbind_variables`), never rebound: what a call of one returns is static."""
    out: set[str] = set()
    params = node.params
    if isinstance(node, cst.FunctionDef):
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            ann = p.annotation.annotation if p.annotation is not None else None
            if ann is None:
                continue
            if isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr):
                ann = ann.left if isinstance(ann.right, cst.Name) and ann.right.value == "None" else ann
            if not isinstance(ann, cst.Subscript) or qualify(ann.value) not in _CALLABLES:
                continue
            last = ann.slice[-1].slice
            if isinstance(last, cst.Index) and admits_no_array(last.value, qualify):
                out.add(p.name.value)
        out -= _rebound_but_to_constant_lambdas(node, out)
    return frozenset(out)


def _rebound_but_to_constant_lambdas(node: cst.FunctionDef, names: set[str]) -> set[str]:
    """Those of `names` the body binds to anything but a lambda returning a literal (penzai's
    `if predicate is None: predicate = lambda _: True` keeps `predicate` a bool-valued callable)."""
    bound = assigned_names(node.body) & names
    constant_only: dict[str, bool] = {}

    class V(cst.CSTVisitor):
        def visit_Assign(self, n: cst.Assign) -> None:
            for t in n.targets:
                if isinstance(t.target, cst.Name) and t.target.value in bound:
                    ok = isinstance(n.value, cst.Lambda) and _constant_body(n.value) and len(n.targets) == 1
                    constant_only[t.target.value] = constant_only.get(t.target.value, True) and ok

        def visit_AugAssign(self, n: cst.AugAssign) -> None:
            if isinstance(n.target, cst.Name):
                constant_only[n.target.value] = False

        def visit_AnnAssign(self, n: cst.AnnAssign) -> None:
            if isinstance(n.target, cst.Name):
                constant_only[n.target.value] = False

    walk(node.body, V())
    # bound some other way (a loop target, `with ... as`, an import, a walrus) counts as rebound too
    return {n for n in bound if not constant_only.get(n, False) or _bound_otherwise(node.body, n)}


def _bound_otherwise(body: cst.CSTNode, name: str) -> bool:
    found = False

    class V(cst.CSTVisitor):
        def visit_For(self, n: cst.For) -> None:
            nonlocal found
            found |= name in target_names(n.target)

        def visit_NamedExpr(self, n: cst.NamedExpr) -> None:
            nonlocal found
            found |= isinstance(n.target, cst.Name) and n.target.value == name

        def visit_AsName(self, n: cst.AsName) -> None:
            nonlocal found
            found |= isinstance(n.name, cst.Name) and n.name.value == name

    walk(body, V())
    return found


def _constant_body(lam: cst.Lambda) -> bool:
    body = lam.body
    return isinstance(body, (cst.Integer, cst.Float, cst.SimpleString)) or (
        isinstance(body, cst.Name) and body.value in ("True", "False", "None")
    )


def object_expressions(node: cst.CSTNode) -> set[str]:
    """`a.b` for every `a.b.attr` read under `node` where `attr` is public and no array attribute."""
    found: set[str] = set()

    class V(cst.CSTVisitor):
        def visit_Attribute(self, n: cst.Attribute) -> None:
            attr = n.attr.value
            if not attr.startswith("_") and attr not in ARRAY_ATTRIBUTES:
                held = dotted_name(n.value)
                if held is not None:
                    found.add(held)

    walk(node, V())
    return found


def read_off_known(e: cst.Attribute, known: Container[str]) -> bool:
    """`e` is an array attribute (`x.T`), or a data attribute of a name in `known` (objects whose
    class the file shows), or a Variable's `.value` of one (`self.count.value`)."""
    attr = e.attr.value
    if attr in ARRAY_ATTRIBUTES:
        return True
    inner = e.value
    if attr in VARIABLE_VALUE_ATTRIBUTES and isinstance(inner, cst.Attribute):
        inner = inner.value
    return isinstance(inner, cst.Name) and inner.value in known
