"""Every call of a def nested in a function, when the enclosing function shows them all.

A nested `loss_fn(model)` handed to `nnx.value_and_grad(loss_fn)(model, batch)` takes, for its
parameters, the values that call passes: the transform passes its arguments through unchanged
(`transforms.FUNCTION_WRAPPERS`, and jit). `ValueKinds` reads those values to know which class a
parameter holds (`model(x)` in the loss then runs that class's `__call__`: the Flax NNX training
step as Flax's guides write it). When the def's name is used any other way (returned, stored,
handed to `lax.scan` or to a helper), its callers are not all visible and nothing is answered.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.scopes import ScopeIndex
from jaxfix.analysis.transforms import FUNCTION_WRAPPERS, JIT_NAMES
from jaxfix.analysis.walk import walk

# transforms whose result, called, calls the function on the same arguments
_ARGUMENTS_PASSED_THROUGH = FUNCTION_WRAPPERS | JIT_NAMES


def nested_calls(idx: ScopeIndex, qualify, fdef: cst.FunctionDef) -> list[cst.Call] | None:
    """The calls that run `fdef` (a def nested in a function), each with the arguments `fdef`
    receives: `loss_fn(m)` or `nnx.grad(loss_fn)(m)`; None when a use of its name is not such a call."""
    outer = idx.enclosing_scope(fdef)
    own = fdef.name.value
    if not isinstance(outer, cst.FunctionDef) or len(idx.scope_info(outer).bindings.get(own, [])) != 1:
        return None
    calls: list[cst.Call] = []
    for name in _names(outer.body, own):
        if _binding_or_label(idx, name):
            continue
        if idx.resolve(own, name) is not outer:
            continue  # a nested scope's own `loss_fn`
        parent = idx.parent(name)
        if isinstance(parent, cst.Call) and parent.func is name:
            calls.append(parent)
            continue
        wrapper = idx.parent(parent) if isinstance(parent, cst.Arg) else None
        called = idx.parent(wrapper) if wrapper is not None else None
        if (
            isinstance(wrapper, cst.Call)
            and wrapper.args
            and wrapper.args[0] is parent
            and parent.keyword is None
            and qualify(wrapper.func) in _ARGUMENTS_PASSED_THROUGH
            and isinstance(called, cst.Call)
            and called.func is wrapper
        ):
            calls.append(called)
            continue
        return None
    return calls


def _names(node: cst.CSTNode, value: str) -> list[cst.Name]:
    found: list[cst.Name] = []

    class _Names(cst.CSTVisitor):
        def visit_Name(self, n: cst.Name) -> None:
            if n.value == value:
                found.append(n)

    walk(node, _Names())
    return found


def _binding_or_label(idx: ScopeIndex, name: cst.Name) -> bool:
    """The name of a def/class/param being bound, or an attribute or keyword label: no use."""
    parent = idx.parent(name)
    if isinstance(parent, (cst.FunctionDef, cst.ClassDef, cst.Param)) and parent.name is name:
        return True
    if isinstance(parent, cst.Attribute) and parent.attr is name:
        return True
    return isinstance(parent, cst.Arg) and parent.keyword is name
