"""JAX403's fast screen on the stdlib AST: whether a file may hold an item store that
`in_place_update_on_traced_array` reports, over-approximating the rule's decisions.
`traced_store_root` names the array an item store in code that may run under a trace writes into,
`ArrayScreen` mirrors `ArrayEvidence.is_array` for one function, and `eager_store` screens the
stores into `jax.numpy` arrays in code nothing traces.
"""

from __future__ import annotations

import ast
import bisect

from jaxfix.analysis import astscan
from jaxfix.analysis.eager_arrays import ARRAY_CONSTRUCTORS, eager_array_names
from jaxfix.analysis.pytree_fields import ast_names_array
from jaxfix.analysis.screen_function import ScreenFunction
from jaxfix.analysis.staged_calls import is_staged_call_name
from jaxfix.analysis.trace_sites import (
    ARRAY_ATTRS,
    ARRAY_METHODS,
    CONTAINER_METHODS,
    DISPLAY_CALLS,
    string_keyed_root_ast,
)

_CONSTRUCTOR_NAMES = frozenset(name.rpartition(".")[2] for name in ARRAY_CONSTRUCTORS)


def eager_store(tree: ast.Module, qualify) -> bool:
    """The screen of `InPlaceUpdateRule._check_eager`: some function (any, traced or not: the
    screen does not ask) stores an item into a name `eager_arrays.eager_array_names` gives, with
    no string key.

    A file with no call spelled like a constructor (`zeros`, `array`, ...: `astscan`'s list of the
    module's calls) stops there; then a walk of the statements alone (stores and defs are
    statements) finds the item stores, and only the functions holding one are read, each once."""
    constructed = astscan.calls_named(tree, _CONSTRUCTOR_NAMES, _CONSTRUCTOR_NAMES)
    if not constructed:
        return False
    stores: list[tuple[int, str]] = []
    functions: list[ast.AST] = []
    for n in astscan.statements(tree):  # stores and defs are statements
        kind = type(n)
        if kind is ast.Assign or kind is ast.AugAssign:
            for t in n.targets if kind is ast.Assign else (n.target,):
                if type(t) is ast.Subscript and not _string(t.slice):
                    root = _store_root(t)
                    if type(root) is ast.Name:
                        stores.append((n.lineno, root.id))
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            functions.append(n)
    if not stores or not functions:
        return False
    roots: dict[int, tuple[ast.AST, set[str]]] = {}
    for line, name in stores:
        # the innermost function around the store (the screen may take a nested def's store for
        # its parent's as well: it only has to admit every file the rule reports in)
        around = [f for f in functions if f.lineno <= line <= f.end_lineno]
        if around:
            func = max(around, key=lambda f: f.lineno)
            roots.setdefault(id(func), (func, set()))[1].add(name)
    # a function holding no call spelled like a constructor binds no name to one: not read
    lines = sorted(call.lineno for call in constructed)
    return any(
        bisect.bisect_left(lines, func.lineno) < bisect.bisect_right(lines, func.end_lineno)
        and names & eager_array_names(func, qualify)
        for func, names in roots.values()
    )


# -- the screen: an item store into a name that may hold a traced array, on the stdlib AST -------
def _store_root(target: ast.AST) -> ast.AST:
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target = target.value
    return target


def traced_store_root(fn: ScreenFunction, n: ast.AST) -> str | None:
    """The name the item store `n` stores into, when it may be a traced array. As the rule, only
    the first subscript target counts, and not with a string key (`obj.data["params"] = v`); only
    names the function binds count as arrays (ArrayEvidence): closures and globals do not."""
    kind = type(n)
    if kind is ast.AugAssign:
        target = n.target
    elif kind is ast.Assign:
        target = n.targets[0]
        if type(target) is not ast.Subscript:
            target = next((t for t in n.targets if type(t) is ast.Subscript), target)
    else:
        return None
    if type(target) is not ast.Subscript or _string(target.slice):
        return None  # `_string` of a tuple index is no: a parenthesized `[("a", 1)]` is one key
    root = _store_root(target)
    if type(root) is ast.Name and root.id in fn.stored and fn.traced(root):
        return root.id
    return None


def _string(e: ast.AST) -> bool:
    """A string literal (libcst's SimpleString, ConcatenatedString or FormattedString)."""
    return (type(e) is ast.Constant and isinstance(e.value, (str, bytes))) or type(e) is ast.JoinedStr


_DISPLAYS = (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)
_PARAM = object()  # a binding by a parameter (its annotation is kept beside it)


def _display(e: ast.AST) -> bool:
    """`trace_sites._is_display` on the stdlib AST."""
    return (
        isinstance(e, _DISPLAYS)
        or _string(e)
        or (type(e) is ast.Call and type(e.func) is ast.Name and e.func.id in DISPLAY_CALLS)
    )


def _index_parts(sub: ast.Subscript) -> list[ast.AST]:
    """The index elements of `sub`; a tuple index counts as its elements (libcst tells a
    parenthesized tuple, one element, from `m[i, j]`, two; the stdlib AST does not), which makes
    `_display` of a part no more often than the rule's test."""
    return sub.slice.elts if type(sub.slice) is ast.Tuple else [sub.slice]


class ArrayScreen:
    """`ArrayEvidence.is_array` for one function on the stdlib AST, never no where the rule says
    yes: the same bindings (parameters; assignments, `for` and comprehension targets, `with ... as`
    and walrus targets in the function's code, nested defs, lambdas and classes left out), the same
    uses (`x.shape`: an array; `x.append`, `x["k"]`: a container) and the same decision, except
    that a traced parameter is always taken for one (which parameters the trace enters with is
    the analysis's) and a name is never taken for a sequence (`FunctionFacts.is_sequence`). A
    lambda has no item store."""

    def __init__(self, fn: ScreenFunction) -> None:
        self.qualify = fn.screen.names.qualify_ast
        self.bindings: dict[str, list] = {}  # name -> _PARAM, None (unknown), ("unpack", value) or the value
        self.annotations: dict[str, list[ast.AST]] = {}  # parameter -> its annotation
        self.used_as_array: set[str] = set()
        self.used_as_container: set[str] = set()
        self.memo: dict[str, bool] = {}
        node = fn.node
        if isinstance(node, ast.Lambda):
            return
        bind = self._bind
        stack: list[ast.AST] = list(astscan.children(node))  # decorators, parameters, annotations, body
        while stack:
            n = stack.pop()
            kind = type(n)
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda or kind is ast.ClassDef:
                continue
            if kind is ast.Assign:
                for t in n.targets:
                    bind(t, n.value)
            elif kind is ast.AnnAssign:
                if type(n.target) is ast.Name and n.value is not None:
                    bind(n.target, n.value)
            elif kind is ast.AugAssign:
                if type(n.target) is ast.Name and _display(n.value):
                    bind(n.target, n.value)  # `x += [v]`: a list
            elif kind is ast.For or kind is ast.AsyncFor or kind is ast.comprehension:
                bind(n.target, None)
            elif kind is ast.withitem:
                if n.optional_vars is not None:
                    bind(n.optional_vars, None)
            elif kind is ast.NamedExpr:
                bind(n.target, n.value)
            elif kind is ast.Attribute:
                if type(n.value) is ast.Name:
                    if n.attr in ARRAY_ATTRS:
                        self.used_as_array.add(n.value.id)
                    elif n.attr in CONTAINER_METHODS:
                        self.used_as_container.add(n.value.id)
            elif kind is ast.Subscript:
                keyed = string_keyed_root_ast(n)
                if keyed is not None:
                    self.used_as_container.add(keyed)  # `d["key"]`, `state[0]["key"]`: a container
            stack.extend(astscan.children(n))
        args = node.args
        for p in reversed((*args.posonlyargs, *args.args, *args.kwonlyargs)):  # not `*args`, `**kwargs`
            self.bindings.setdefault(p.arg, []).insert(0, _PARAM)
            if p.annotation is not None:
                self.annotations.setdefault(p.arg, []).append(p.annotation)

    def _bind(self, target: ast.AST, value: ast.AST | None, unpacked: bool = False) -> None:
        kind = type(target)
        if kind is ast.Name:
            self.bindings.setdefault(target.id, []).append(
                ("unpack", value) if unpacked and value is not None else value
            )
        elif kind is ast.Tuple or kind is ast.List:
            for el in target.elts:  # a starred element binds its name to a part of the value
                self._bind(el.value if type(el) is ast.Starred else el, value, True)
        elif kind is ast.Starred:
            self._bind(target.value, None)

    def may_be_array(self, name: str) -> bool:
        if name not in self.memo:
            self.memo[name] = True  # while deciding (`x = x * 2`): a self-reference adds no evidence
            self.memo[name] = self._decide(name)
        return self.memo[name]

    def _decide(self, name: str) -> bool:
        values = self.bindings.get(name)
        if not values:
            return False  # not bound here: a closure variable or a global
        exprs = [v[1] if type(v) is tuple else v for v in values]
        if any(v is not None and v is not _PARAM and (_display(v) or self._numpy_value(v)) for v in exprs):
            return False
        if name in self.used_as_container:
            return False
        if not all(ast_names_array(a, self.qualify) for a in self.annotations.get(name, ())):
            return False
        if name in self.used_as_array:
            return True
        for v in values:
            if v is _PARAM:
                continue
            if type(v) is tuple:
                if not (type(v[1]) is ast.Call and is_staged_call_name(self.qualify(v[1].func))):
                    return False
            elif v is None or not self.array_expr(v):
                return False
        return True

    def _numpy_value(self, e: ast.AST) -> bool:
        return type(e) is ast.Call and (self.qualify(e.func) or "").startswith("numpy.")

    def array_expr(self, e: ast.AST) -> bool:
        """`ArrayEvidence.array_expr`: may `e` be a JAX array expression?"""
        kind = type(e)
        if kind is ast.Name:
            return self.may_be_array(e.id)
        if kind is ast.Call:
            if is_staged_call_name(self.qualify(e.func)):
                return True
            func = e.func
            if type(func) is ast.Attribute and func.attr in ARRAY_METHODS:
                inner = func.value
                if type(inner) is ast.Subscript and type(inner.value) is ast.Attribute and inner.value.attr == "at":
                    return True
                return self.array_expr(inner)
            return False
        if kind is ast.BinOp:
            if _display(e.left) or _display(e.right):
                return False
            return self.array_expr(e.left) or self.array_expr(e.right)
        if kind is ast.UnaryOp:
            return self.array_expr(e.operand)
        if kind is ast.Attribute and e.attr in ("T", "mT", "real", "imag"):
            return self.array_expr(e.value)
        if kind is ast.Subscript and not any(_display(p) for p in _index_parts(e)):
            return self.array_expr(e.value)  # `m[0]`: part of an array
        return False
