"""The calls of a name: spelled under a node (`calls_named`, `calls_by_name`), and every call of a
def nested in a function, when the enclosing function shows them all (`nested_calls`).

`calls_named(node, names)` is the syntactic answer: `f(...)` and `<obj>.f(...)` anywhere under
`node`, nested defs included, whatever `f` resolves to (callers that care ask `ScopeIndex`).
`module_calls(idx, names)` is the same answer for the whole module, from one walk per file: a
rule asking it per site must not walk the module per site.

A nested `loss_fn(model)` handed to `nnx.value_and_grad(loss_fn)(model, batch)` (or to
`grad_fn = nnx.value_and_grad(loss_fn)`, then `grad_fn(model, batch)`) takes, for its
parameters, the values that call passes (a module-level one too: `wrapped_calls`): the
transform passes its arguments through unchanged (`transforms.FUNCTION_WRAPPERS`, and jit). `ValueKinds` reads those values to know which class a
parameter holds (`model(x)` in the loss then runs that class's `__call__`: the Flax NNX training
step as Flax's guides write it). When the def's name is used any other way (returned, stored,
handed to `lax.scan` or to a helper), its callers are not all visible and nothing is answered.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from weakref import WeakKeyDictionary

import libcst as cst

from jaxfix.analysis.scopes import ScopeIndex
from jaxfix.analysis.transforms import FUNCTION_WRAPPERS, JIT_NAMES
from jaxfix.analysis.walk import walk

# transforms whose result, called, calls the function on the same arguments
_ARGUMENTS_PASSED_THROUGH = FUNCTION_WRAPPERS | JIT_NAMES


def calls_named(
    node: cst.CSTNode, names: Container[str], *, methods: bool = True, bare_receiver: bool = False
) -> list[cst.Call]:
    """The calls under `node` (itself included), in source order, spelled `f(...)` for an `f` in
    `names` and, with `methods`, `<obj>.f(...)` too; with `bare_receiver`, only where `<obj>` is a
    plain name (`self.f(...)`, not `self.inner.f(...)`)."""
    visitor = _Calls(methods, bare_receiver)
    walk(node, visitor)
    return [call for name, call in visitor.found if name in names]


def calls_by_name(node: cst.CSTNode, *, methods: bool = True) -> dict[str, list[cst.Call]]:
    """The calls under `node` (itself included) by the name they call, each list in source order:
    `f(...)` under `f` and, with `methods`, `<obj>.f(...)` too (one walk answers every name)."""
    visitor = _Calls(methods, bare_receiver=False)
    walk(node, visitor)
    calls: dict[str, list[cst.Call]] = {}
    for name, call in visitor.found:
        calls.setdefault(name, []).append(call)
    return calls


def module_calls(idx: ScopeIndex, names: Iterable[str], *, methods: bool = True) -> list[cst.Call]:
    """`calls_named(idx.module, names, methods=methods)`, answered from one walk of the module kept
    with `idx` (a rule asking once per site walked the whole file per site: quadratic on a large
    file, minutes for 50,000 lines)."""
    by_name = _MODULE_CALLS.get(idx)
    if by_name is None:
        by_name = _MODULE_CALLS[idx] = {}
        visitor = _Calls(methods=True, bare_receiver=False)
        for call in idx.of_type(cst.Call):  # what a walk of the module visits, without the walk
            visitor.visit_Call(call)
        for order, (name, call) in enumerate(visitor.found):
            by_name.setdefault(name, []).append((order, call))
    found = [
        (order, call)
        for name in set(names)
        for order, call in by_name.get(name, ())
        if methods or isinstance(call.func, cst.Name)
    ]
    found.sort(key=lambda pair: pair[0])
    return [call for _, call in found]


# each file's calls by name, in source order, for as long as its ScopeIndex lives
_MODULE_CALLS: WeakKeyDictionary[ScopeIndex, dict[str, list[tuple[int, cst.Call]]]] = WeakKeyDictionary()


class _Calls(cst.CSTVisitor):
    """(called name, call) for each call spelled `f(...)` or, with `methods`, `<obj>.f(...)`."""

    def __init__(self, methods: bool, bare_receiver: bool) -> None:
        self.methods = methods
        self.bare_receiver = bare_receiver
        self.found: list[tuple[str, cst.Call]] = []

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name):
            self.found.append((func.value, node))
        elif self.methods and isinstance(func, cst.Attribute):
            if not self.bare_receiver or isinstance(func.value, cst.Name):
                self.found.append((func.attr.value, node))


def nested_calls(idx: ScopeIndex, qualify, fdef: cst.FunctionDef) -> list[cst.Call] | None:
    """The calls that run `fdef` (a def nested in a function), each with the arguments `fdef`
    receives: `loss_fn(m)`, `nnx.grad(loss_fn)(m)` or `g = nnx.grad(loss_fn)` and `g(m)`; None
    when a use of its name is not such a call."""
    outer = idx.enclosing_scope(fdef)
    own = fdef.name.value
    if not isinstance(outer, cst.FunctionDef) or len(idx.scope_info(outer).bindings.get(own, [])) != 1:
        return None
    calls: list[cst.Call] = []
    for name in _names(outer.body, own):
        if _binding_or_label(idx, name) or idx.resolve(own, name) is not outer:
            continue  # a nested scope's own `loss_fn`
        running = _running_calls(idx, qualify, name)
        if running is None:
            return None
        calls.extend(running)
    return calls


def wrapped_calls(idx: ScopeIndex, qualify, module: cst.Module, fdef: cst.FunctionDef) -> list[cst.Call]:
    """The calls of the module-level `fdef` through a transform that passes the arguments on
    (`nnx.value_and_grad(loss_fn)(model, x, y)`, or `grad_fn = nnx.value_and_grad(loss_fn)` and
    `grad_fn(model, batch)` in a training step): what a call of it by name says of its parameters,
    these say too. The module's other uses of the name are not asked about (a module-level
    function's callers are never all in sight)."""
    own = fdef.name.value
    calls: list[cst.Call] = []
    for name in _names(module, own):
        if _binding_or_label(idx, name) or idx.resolve(own, name) is not module:
            continue
        parent = idx.parent(name)
        if isinstance(parent, cst.Call) and parent.func is name:
            continue  # a call by name: the caller has those
        calls.extend(_running_calls(idx, qualify, name) or ())
    return calls


def _running_calls(idx: ScopeIndex, qualify, name: cst.Name) -> list[cst.Call] | None:
    """The calls that run the function `name` names with the arguments it receives: `name(...)`
    itself, `transform(name)(...)` for a transform that passes them through, or the calls of
    `g = transform(name, ...)` where `g`, bound once, is only ever called; else None."""
    parent = idx.parent(name)
    if isinstance(parent, cst.Call) and parent.func is name:
        return [parent]
    wrapper = idx.parent(parent) if isinstance(parent, cst.Arg) else None
    if not (
        isinstance(wrapper, cst.Call)
        and wrapper.args
        and wrapper.args[0] is parent
        and parent.keyword is None
        and qualify(wrapper.func) in _ARGUMENTS_PASSED_THROUGH
    ):
        return None
    called = idx.parent(wrapper)
    if isinstance(called, cst.Call) and called.func is wrapper:
        return [called]
    if isinstance(called, cst.Assign) and len(called.targets) == 1 and isinstance(called.targets[0].target, cst.Name):
        return _calls_of_bound(idx, called.targets[0].target)
    return None


def _calls_of_bound(idx: ScopeIndex, target: cst.Name) -> list[cst.Call] | None:
    """The calls of the name `target` binds, when it is bound once and every use is a call."""
    scope = idx.enclosing_scope(target)
    bound = target.value
    if scope is None or len(idx.scope_info(scope).bindings.get(bound, [])) != 1:
        return None
    calls: list[cst.Call] = []
    for use in _names(scope, bound):
        if use is target or _binding_or_label(idx, use) or idx.resolve(bound, use) is not scope:
            continue
        parent = idx.parent(use)
        if not (isinstance(parent, cst.Call) and parent.func is use):
            return None
        calls.append(parent)
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
