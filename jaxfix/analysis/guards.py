"""Branches where a value cannot be a tracer, because the code tested for it first.

Library code that runs both eagerly and under a trace guards its concrete-only steps:
`a.shape if hasattr(a, "shape") else np.asarray(a).shape` (optax), or
`if not isinstance(pred, jax.core.Tracer): pred = pred.item()` (equinox's `error_if`). A tracer
always has the array attributes and is always a `Tracer`, so the guarded step never sees one;
reporting it would be a false alarm.
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

# attributes every tracer has: a value without one is no tracer
ARRAY_ATTRS = frozenset({"shape", "dtype", "ndim", "size"})


def never_traced_at(
    node: cst.CSTNode,
    name: str,
    parent: Callable[[cst.CSTNode], cst.CSTNode | None],
    qualify: Callable[[cst.BaseExpression], str | None],
) -> bool:
    """`node` runs only where the local `name` holds no tracer: in the `else` of
    `hasattr(name, "shape")` or of `isinstance(name, Tracer)`, or in the body of
    `not isinstance(name, Tracer)` (an `if` statement or a conditional expression, up to the
    enclosing function)."""
    child, up = node, parent(node)
    while up is not None and not isinstance(up, (cst.FunctionDef, cst.Lambda)):
        if isinstance(up, (cst.If, cst.IfExp)):
            in_else = child is up.orelse
            in_body = child is up.body
            if in_else and (_has_array_attr(up.test, name) or _is_tracer_test(up.test, name, qualify)):
                return True
            negated = isinstance(up.test, cst.UnaryOperation) and isinstance(up.test.operator, cst.Not)
            if in_body and negated and _is_tracer_test(up.test.expression, name, qualify):
                return True
        child, up = up, parent(up)
    return False


def _has_array_attr(test: cst.BaseExpression, name: str) -> bool:
    """`hasattr(name, "shape")` (or dtype/ndim/size)."""
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "hasattr"):
        return False
    args = test.args
    return (
        len(args) == 2
        and _is_name(args[0].value, name)
        and isinstance(args[1].value, cst.SimpleString)
        and args[1].value.evaluated_value in ARRAY_ATTRS
    )


def _is_tracer_test(test: cst.BaseExpression, name: str, qualify) -> bool:
    """`isinstance(name, jax.core.Tracer)` (the base class of every tracer, as jax spells it)."""
    if not (isinstance(test, cst.Call) and isinstance(test.func, cst.Name) and test.func.value == "isinstance"):
        return False
    if len(test.args) != 2 or not _is_name(test.args[0].value, name):
        return False
    qual = qualify(test.args[1].value) or ""
    return qual in ("jax.core.Tracer", "jax._src.core.Tracer")


def _is_name(expr: cst.BaseExpression, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name
