"""Whether the calls a file shows take the branch of a function that holds a given node.

A function often keeps a fallback for a caller that passes nothing: `if forward_fn is not None:
out = forward_fn(...)` / `else: forward = jax.jit(...)` (hachoj/PixelArt-Alpha-Equinox-Grain@
<heldout20> train_stage2.py:80, whose every call passes `forward_fn=t5_forward_jit`), or `if
compare_with_lip:` that every caller passes `False`. A finding in such a branch describes code the
program as written never runs. `untaken_by_callers` answers from the branch tests on a parameter
(`p is None`, `p is not None`, `p`, `not p`) and the value each call passes for it (or the
default it leaves): a literal, or a value `ValueKinds` knows is not `None` (a jitted callable, an
array, an instance). One call it cannot decide, or none at all, and the branch counts as taken.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.scopes import ScopeIndex
from jaxfix.analysis.value_kinds import STARRED, UNKNOWN, ValueKinds, argument_for

_UNDECIDED = object()
_NOT_NONE = object()  # a value known not to be None whose truth is its own


def untaken_by_callers(
    idx: ScopeIndex, kinds: ValueKinds, function: cst.FunctionDef, node: cst.CSTNode, calls: list[cst.Call]
) -> bool:
    """Every one of `calls` (calls of `function`, at least one) passes a value for a parameter that
    an `if` of `function` tests so that the branch holding `node` does not run."""
    calls = _own_calls(idx, function, calls)
    if not calls:
        return False

    def never(test: cst.BaseExpression, wanted: bool) -> bool:
        """No call makes `test` come out `wanted`."""
        tested = _tested_parameter(test, function)
        if tested is None:
            return False
        name, decide = tested
        return all(decide(_passed(idx, kinds, function, call, name)) is (not wanted) for call in calls)

    child = node
    for anc in idx.ancestors(node):
        if isinstance(anc, cst.If) and child is not anc.test:
            if never(anc.test, child is anc.body):  # the body runs when the test holds, `orelse` when not
                return True
        if isinstance(anc, (cst.IndentedBlock, cst.Module)) and child in anc.body:
            # `if forward_fn is not None: return forward_fn(x)` before it: runs when the test fails
            earlier = anc.body[: anc.body.index(child)]
            if any(isinstance(s, cst.If) and s.orelse is None and _exits(s.body) and never(s.test, False) for s in earlier):
                return True
        if anc is function:
            return False
        child = anc
    return False


def _exits(block: cst.BaseSuite) -> bool:
    """The block always leaves the function: its last statement is a `return` or a `raise`."""
    body = block.body if isinstance(block, cst.IndentedBlock) else [block]
    last = body[-1] if body else None
    if isinstance(last, cst.SimpleStatementLine):
        return isinstance(last.body[-1], (cst.Return, cst.Raise))
    return isinstance(last, cst.SimpleStatementSuite) and isinstance(last.body[-1], (cst.Return, cst.Raise))


def _tested_parameter(test: cst.BaseExpression, function: cst.FunctionDef):
    """(parameter, value -> test result or None) for `p is None`, `p is not None`, `p`, `not p`."""
    negate = False
    while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        negate, test = not negate, test.expression
    if isinstance(test, cst.Name):
        name, decide = test.value, _truth
    elif (
        isinstance(test, cst.Comparison)
        and isinstance(test.left, cst.Name)
        and len(test.comparisons) == 1
        and isinstance(test.comparisons[0].operator, (cst.Is, cst.IsNot))
        and isinstance(test.comparisons[0].comparator, cst.Name)
        and test.comparisons[0].comparator.value == "None"
    ):
        name = test.left.value
        is_not = isinstance(test.comparisons[0].operator, cst.IsNot)
        decide = _is_not_none if is_not else _is_none
    else:
        return None
    if name not in _parameters(function):
        return None
    if not negate:
        return name, decide
    return name, lambda value: None if decide(value) is None else not decide(value)


def _parameters(function: cst.FunctionDef) -> list[str]:
    p = function.params
    return [q.name.value for q in (*p.posonly_params, *p.params, *p.kwonly_params)]


def _passed(idx: ScopeIndex, kinds: ValueKinds, function: cst.FunctionDef, call: cst.Call, name: str):
    """What `call` gives parameter `name`: a Python literal's value, _NOT_NONE or _UNDECIDED."""
    expr = _argument(idx, function, call, name)
    if expr is _UNDECIDED:
        return _UNDECIDED
    if expr is None:
        param = _parameter(function, name)
        if param is None or param.default is None:
            return _UNDECIDED
        return _value(kinds, param.default, function)
    return _value(kinds, expr, call)


def _argument(idx: ScopeIndex, function: cst.FunctionDef, call: cst.Call, name: str):
    """What `call` (a call of `function`) passes for parameter `name` (`value_kinds.argument_for`;
    `obj.m(...)` of a method passes its first parameter as the object): None when it leaves it to its
    default, _UNDECIDED with `*args`/`**kwargs`."""
    positional = [q.name.value for q in (*function.params.posonly_params, *function.params.params)]
    if isinstance(call.func, cst.Attribute) and _is_method(idx, function):
        positional = positional[1:]
    passed = argument_for(call, positional, name)
    return _UNDECIDED if passed is STARRED else passed


def default_for_every_call(idx: ScopeIndex, function: cst.FunctionDef, name: str, calls: list[cst.Call]):
    """The default of parameter `name` when `calls` (at least one) all leave it out: the value the
    parameter holds in every run this file shows."""
    param = _parameter(function, name)
    calls = _own_calls(idx, function, calls)
    if not calls or param is None or param.default is None:
        return None
    if all(_argument(idx, function, call, name) is None for call in calls):
        return param.default
    return None


def _own_calls(idx: ScopeIndex, function: cst.FunctionDef, calls: list[cst.Call]) -> list[cst.Call]:
    """The calls spelled as calls of `function` can be: `name(...)` of a function, `obj.name(...)`
    of a method (an `obj.name(...)` of a module function is another object's method as often)."""
    method = _is_method(idx, function)
    return [c for c in calls if isinstance(c.func, cst.Attribute) == method]


def _parameter(function: cst.FunctionDef, name: str) -> cst.Param | None:
    p = function.params
    return next((q for q in (*p.posonly_params, *p.params, *p.kwonly_params) if q.name.value == name), None)


def _value(kinds: ValueKinds, expr: cst.BaseExpression, at: cst.CSTNode):
    if isinstance(expr, cst.Name) and expr.value in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[expr.value]
    if isinstance(expr, cst.Integer):
        return int(expr.value, 0) if expr.value.isdigit() else _UNDECIDED
    if isinstance(expr, cst.SimpleString):
        return expr.evaluated_value
    kind = kinds.of_expr(expr, at)
    if kind.kind != UNKNOWN and "None" not in kind.what.split(" or "):  # `combine` joins what a name may be
        return _NOT_NONE
    return _UNDECIDED


def _is_method(idx: ScopeIndex, function: cst.FunctionDef) -> bool:
    body = idx.parent(function)
    return isinstance(idx.parent(body) if body is not None else None, cst.ClassDef)


def _is_none(value) -> bool | None:
    if value is _UNDECIDED:
        return None
    return value is None  # _NOT_NONE is not None


def _is_not_none(value) -> bool | None:
    result = _is_none(value)
    return None if result is None else not result


def _truth(value) -> bool | None:
    if value is _UNDECIDED or value is _NOT_NONE:
        return None  # an object's truth is its own: only literals decide
    return bool(value)
