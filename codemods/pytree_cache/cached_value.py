"""What a cached property caches: an array, a plain Python object, or something this file cannot tell.

JAX101's hazard is a tracer stored in the cache: only a value computed with array operations can
be one. A `cached_property` whose value is a Python object (a loss-type string, a tuple of static
arguments, a quantizer object, None) rebuilds that object once per trace and never holds a tracer
(held-out labels, erfanzar/EasyDeL@090a03b `easydel/infra/base_module.py:706,723`,
`easydel/layers/attention/_flexible.py:827`). The property fix is `safe` only when the value is
certainly an array; when the file cannot tell, the finding stays but the fix is `unsafe`: turning
the cache into a property re-runs the body at every read (a new object each time, side effects
repeated), which a plain Python value's users may rely on.

The kinds come from `jaxfix.analysis.value_kinds` (one place for what a value is): the return
annotation first, else every `return` of the body.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis import pytrees as pt
from jaxfix.analysis.static_values import admits_no_array, is_known_library
from jaxfix.analysis.value_kinds import ARRAY, NUMBER, PYTREE, STATIC, UNHASHABLE, ValueKinds
from jaxfix.analysis.walk import own_returns
from jaxfix.rulebase import RuleContext

ARRAY_VALUE = "array"
PYTHON_VALUE = "python"  # a plain Python object: never a tracer
UNKNOWN_VALUE = "unknown"

_PYTHON_KINDS = frozenset({STATIC, NUMBER, UNHASHABLE})
# annotations that say nothing about the value (`tp.Any`, `object`)
_SILENT_ANNOTATIONS = frozenset({"typing.Any", "object", "Any", "typing_extensions.Any"})
_ARRAYISH = ("Array", "array", "Tensor", "ndarray")


def cached_value(ctx: RuleContext, func: cst.FunctionDef, classdef: cst.ClassDef | None = None) -> tuple[str, str]:
    """(ARRAY_VALUE | PYTHON_VALUE | UNKNOWN_VALUE, a few words why) for the cached property `func`
    of `classdef` (whose array-annotated fields, `w: jax.Array`, are arrays on `self`)."""
    kinds = ValueKinds.of(ctx)
    if func.returns is not None:
        decided = _by_annotation(ctx, kinds, func.returns.annotation)
        if decided is not None:
            return decided
    returns = _returned(func)
    if not returns:
        return PYTHON_VALUE, "it returns None"
    found = [kinds.of_expr(value, stmt) if value is not None else kinds.of_expr(cst.Name("None"), stmt) for stmt, value in returns]
    if all(k.kind in _PYTHON_KINDS for k in found):
        return PYTHON_VALUE, f"it returns {found[0].described()}"
    if all(k.kind == ARRAY or (k.kind == PYTREE and k.hashable is False) for k in found):
        return ARRAY_VALUE, "it returns an array"
    fields = _array_fields(kinds, classdef, func)
    params = func.params.params
    receiver = params[0].name.value if params else "self"
    if fields and all(value is not None and _arithmetic_of(value, fields, receiver) for _, value in returns):
        return ARRAY_VALUE, "it returns arithmetic on the class's array fields"
    return UNKNOWN_VALUE, "this file does not show whether its value is an array or a Python object"


def _by_annotation(ctx: RuleContext, kinds: ValueKinds, ann: cst.BaseExpression) -> tuple[str, str] | None:
    qualify = ctx.names.qualify
    if admits_no_array(ann, qualify):
        return PYTHON_VALUE, "its return annotation admits no array"
    kind = kinds.annotation(ann)
    if kind.kind == ARRAY:
        return ARRAY_VALUE, "its return annotation is an array type"
    if kind.kind in _PYTHON_KINDS and kind.kind != UNHASHABLE:
        return PYTHON_VALUE, f"its return annotation says {kind.described()}"
    if isinstance(ann, (cst.Name, cst.Attribute)):
        qual = qualify(ann) or ""
        if qual in _SILENT_ANNOTATIONS or not qual:
            return None
        short = qual.rsplit(".", 1)[-1]
        if any(part in short for part in _ARRAYISH) or not short[:1].isupper():
            return None  # an array alias of the project (`Array`, `Tensor`), or not a class name
        if is_known_library(qual) and "." in qual:
            return None  # a class of an array library may be a pytree of arrays
        if _is_pytree_class(ctx, ann, qual):
            return None
        return PYTHON_VALUE, f"its return annotation names the class `{short}`, which is no array or pytree"
    return None


def _is_pytree_class(ctx: RuleContext, ann: cst.BaseExpression, qual: str) -> bool:
    """`qual` names a pytree class of this file or, with the project index, of the project."""
    if isinstance(ann, cst.Name) and any(name == ann.value for name, _ in pt.pytree_classes(ctx)):
        return True
    project = ctx.project
    if project is not None and "." in qual:
        try:
            return project.kind_of(qual) is not None
        except Exception:  # noqa: BLE001 - an index that cannot answer decides nothing
            return True
    return False


def _returned(func: cst.FunctionDef) -> list[tuple[cst.Return, cst.BaseExpression | None]]:
    """The `return` statements of `func` itself (`walk.own_returns`) with their values."""
    return [(r, r.value) for r in own_returns(func)]


def _array_fields(kinds: ValueKinds, classdef: cst.ClassDef | None, func: cst.FunctionDef) -> set[str]:
    """Fields the class body annotates with an array type (`a: jax.Array`)."""
    if classdef is None or not isinstance(classdef.body, cst.IndentedBlock):
        return set()
    out: set[str] = set()
    for stmt in classdef.body.body:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    if kinds.annotation(small.annotation.annotation).kind == ARRAY:
                        out.add(small.target.value)
    return out


def _arithmetic_of(expr: cst.BaseExpression, fields: set[str], receiver: str) -> bool:
    """`expr` is arithmetic on numbers and `self.<array field>`, reading at least one such field
    (`self.a * (1 - self.e)`): an array, the same as what it reads (an array op of a leaf)."""
    found = [False]

    def ok(e: cst.BaseExpression) -> bool:
        if isinstance(e, cst.BinaryOperation):
            return ok(e.left) and ok(e.right)
        if isinstance(e, cst.UnaryOperation):
            return ok(e.expression)
        if isinstance(e, (cst.Integer, cst.Float)):
            return True
        if isinstance(e, cst.Attribute) and isinstance(e.value, cst.Name) and e.value.value == receiver:
            if e.attr.value in fields:
                found[0] = True
                return True
        return False

    return ok(expr) and found[0]
