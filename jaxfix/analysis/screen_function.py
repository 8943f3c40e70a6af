"""One function as the trace screen sees it (`ScreenFunction`): which of its names and
expressions may hold traced values, read from the stdlib AST. Split from `trace_screen`, which
decides which functions of a module are traced; the per-body facts here are shared by every
module's screen (`body_facts`, cached per def node)."""

from __future__ import annotations

import ast
import weakref
from dataclasses import dataclass, field
from typing import Protocol

from jaxfix.analysis import astscan
from jaxfix.analysis.names import ImportMap
from jaxfix.analysis.python_values import SEQUENCE_TYPES
from jaxfix.analysis.pytrees import dotted
from jaxfix.analysis.staged_calls import is_staged_call_name
from jaxfix.analysis.static_values import (
    ARRAY_ATTRIBUTES,
    ITEM_METHODS,
    KEY_METHODS,
    STATIC_ATTRS,
    TREE_KEY_CLASSES,
    is_folded_on_a_number,
    is_static_method,
    returns_untraced,
)
from jaxfix.analysis.transforms import TRACED_RESULT_TRANSFORMS


class ModuleScreen(Protocol):
    """What a function reads from its module's screen (`trace_screen.TraceScreen`, which imports
    this module: the screen owns its functions)."""

    names: ImportMap
    names_key: tuple
    out_of_sight: frozenset[str]
    def_parent: dict[int, ast.AST | None]

    def info_of(self, node: ast.AST, parent: "ScreenFunction | None" = None) -> "ScreenFunction": ...
    def static_attrs(self) -> frozenset[str]: ...
    def static_params(self, info: "ScreenFunction") -> set[str]: ...
    def python_fields(self, class_name: str | None) -> frozenset[str]: ...
    def passed_sequences(self, info: "ScreenFunction") -> set[str]: ...

_SEQUENCE_CALLS = frozenset({"tuple", "list", "dict", "set", "sorted"})
_ITERATING_CALLS = frozenset({"reversed", "list", "tuple", "sorted"})  # iterate their one argument


class _BodyFacts:
    """What one def or lambda node's body gives, whichever module's screen asks: its own nodes
    (`ScreenFunction.own`), the defs and lambdas nested in it, its binding nodes and the names its
    statements bind, and its settled traced names per start (`ScreenFunction.settle`).

    Kept per node (weakly: they go with the tree): the editor screens a group of functions again
    after each edit, on a tree whose unedited statements are the same node objects
    (`engine.incremental` splices the edited statement into the last tree), so only the edited
    function is walked and settled again. Nothing changes a tree once parsed."""

    __slots__ = ("__weakref__", "assigned", "bindings", "calls_and_loads", "nested", "own", "settled")

    def __init__(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        own: list[ast.AST] = []
        nested: list[ast.AST] = []
        stack = [node.body] if isinstance(node, ast.Lambda) else list(node.body)
        while stack:
            n = stack.pop()
            kind = type(n)
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda:
                nested.append(n)
                a = n.args
                stack.extend(d for d in [*getattr(n, "decorator_list", ()), *a.defaults, *a.kw_defaults] if d)
                continue
            if kind is ast.ClassDef:
                stack.extend(n.body)  # its defs are nested; class-level statements are own
                stack.extend([*n.bases, *n.decorator_list])
                continue
            own.append(n)
            # not the context and operator leaves nor import aliases (`astscan.children`),
            # which no question about the body asks for: a third of the walk's cost
            stack.extend(astscan.children(n))
        self.own = own
        self.nested = nested
        self.bindings = [n for n in own if isinstance(n, _BINDERS)]
        self.calls_and_loads = [
            n for n in own if type(n) is ast.Call or (type(n) is ast.Attribute and type(n.ctx) is ast.Load)
        ]
        self.assigned = frozenset(_assigned_names([] if isinstance(node, ast.Lambda) else node.body))
        # (names_key, static attributes, self fields, start) -> traced names
        self.settled: dict[tuple, frozenset[str]] = {}


_BODY_FACTS: weakref.WeakKeyDictionary[ast.AST, _BodyFacts] = weakref.WeakKeyDictionary()


def body_facts(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> _BodyFacts:
    facts = _BODY_FACTS.get(node)
    if facts is None:
        facts = _BODY_FACTS[node] = _BodyFacts(node)
    return facts


@dataclass(eq=False)
class ScreenFunction:
    """One def or lambda: its own body's nodes (not nested scopes) and what may be traced in it."""

    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda
    name: str
    parent: "ScreenFunction | None"
    class_name: str | None
    params: list[str]
    positional: list[str]
    star_params: set[str]
    is_property: bool
    is_method: bool  # a plain method of a class outside any function: `self` is its first parameter
    screen: ModuleScreen
    in_trace: bool = False
    traced_params: set[str] = field(default_factory=set)
    external_traced: set[str] = field(default_factory=set)  # traced by calls from other modules
    traced_names: set[str] = field(default_factory=set)
    _own: list[ast.AST] | None = None
    _children: list["ScreenFunction"] = field(default_factory=list)
    _locals: set[str] | None = None
    _stored: set[str] | None = None
    _sequences: set[str] | None = None
    _object_names: set[str] | None = None
    _rebinds: set[str] | None = None
    _receiver: tuple[str | None, frozenset[str]] | None = None

    @property
    def locals(self) -> set[str]:
        """Parameters and every name the body binds by statement (as `body_facts.assigned_names`)."""
        if self._locals is None:
            self._locals = set(self.params) | body_facts(self.node).assigned
        return self._locals

    @property
    def own(self) -> list[ast.AST]:
        """The nodes of this function's own body, not of nested functions, lambdas or classes
        (whose defs become `children`; decorators and defaults of nested defs are own nodes), nor
        the `Load`/`Store` and operator leaves or import aliases (`astscan.children`)."""
        return self._own if self._own is not None else self._facts().own

    def _facts(self) -> _BodyFacts:
        """The body's facts, its nested defs registered as `children` (first time asked)."""
        facts = body_facts(self.node)
        if self._own is None:
            # the nested defs in the order the walk met them, as `info_of` registers them
            self._children.extend(self.screen.info_of(node, self) for node in facts.nested)
            self._own = facts.own
        return facts

    @property
    def stored(self) -> set[str]:
        """Every name the own body binds, comprehension and walrus targets included."""
        if self._stored is None:
            self._stored = self.locals | {n.id for n in self.own if type(n) is ast.Name and type(n.ctx) is ast.Store}
        return self._stored

    @property
    def children(self) -> list["ScreenFunction"]:
        self.own
        return self._children

    # -- the questions rules ask -------------------------------------------------------
    def traced(self, e: ast.AST | None) -> bool:
        """May `e` hold a traced value somewhere in this function?"""
        return e is not None and self._expr(e, self.traced_names)

    def test_traced(self, e: ast.AST) -> bool:
        """May `bool(e)` need a traced value (the truth of a tuple/list display is its length)?"""
        if isinstance(e, ast.BoolOp):
            return any(self.test_traced(v) for v in e.values)
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            return self.test_traced(e.operand)
        if isinstance(e, ast.NamedExpr):
            return self.test_traced(e.value)
        if isinstance(e, (ast.Tuple, ast.List, ast.ListComp, ast.Dict, ast.Set, ast.DictComp, ast.SetComp)):
            return False
        if isinstance(e, ast.Call) and self.screen.names.qualify_ast(e.func) in _SEQUENCE_CALLS:
            return False
        kind = type(e)
        if kind is ast.Name and e.id in self.star_params and e.id not in self._rebound():
            return False
        if not self.traced(e):
            return False
        if kind is ast.Name and e.id in self._sequence_params() and e.id not in self._rebound():
            # a parameter annotated as a sequence (`start_indices: Sequence[Any]`) or passed one by
            # every call of the module (`program_ids=(c, b, h, i)`), never rebound
            return False
        if kind is ast.Name or kind is ast.Attribute:
            # `if scale:` / `if eqn.primitive.multiple_results:` on an object the function reads a
            # non-array attribute of (`scale.value_and_grad(...)`)
            return dotted(e) not in self._objects()
        return True

    def _sequence_params(self) -> set[str]:
        """Parameters annotated `Sequence[...]`, `tuple[...]`, `list`... (`traced._sequence_names`),
        and those every call of the module passes a display (`TraceScreen.passed_sequences`)."""
        if self._sequences is None:
            found: set[str] = set()
            if not isinstance(self.node, ast.Lambda):
                a = self.node.args
                qualify = self.screen.names.qualify_ast
                for p in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                    ann = p.annotation
                    if ann is not None:
                        head = ann.value if type(ann) is ast.Subscript else ann
                        if (qualify(head) or "").rsplit(".", 1)[-1] in SEQUENCE_TYPES:
                            found.add(p.arg)
                found |= self.screen.passed_sequences(self)
            self._sequences = found
        return self._sequences

    def _rebound(self) -> set[str]:
        """Names the body binds other than to a sequence: a sequence parameter in it may hold
        something else than it was passed (`traced._sequence_names` drops a parameter some `=`,
        `+=`, `:=` or annotated assignment gives a value that is no sequence; here any binding but
        such an assignment of a display, comprehension or `tuple(...)`/`list(...)`... counts:
        loop, `with`, `except` and tuple targets, imports, defs, classes, `global`)."""
        if self._rebinds is None:
            self._rebinds = _non_sequence_bindings(self.node, self.own, self.screen.names.qualify_ast)
        return self._rebinds

    def _self_fields(self) -> tuple[str | None, frozenset[str]]:
        """(`self`, the fields of its class that hold Python data) for a plain method of a class
        outside any function, the analysis' `receiver` and `static_fields`: `self.num_stages`
        reads a Python value there. (None, {}) for any other function."""
        if self._receiver is None:
            found: tuple[str | None, frozenset[str]] = (None, frozenset())
            node = self.node
            if self.is_method and self.screen.def_parent.get(id(node), 0) is None:
                fields = self.screen.python_fields(self.class_name)
                if fields:
                    found = (self.positional[0], fields)
            self._receiver = found
        return self._receiver

    def _objects(self) -> set[str]:
        """`a.b` for every `a.b.attr` read in the def (nested scopes included) whose `attr` is public
        and no array attribute: an object, whose truth is Python's (`FunctionFacts.holds_object`)."""
        if self._object_names is None:
            found: set[str] = set()
            for n in ast.walk(self.node):
                if type(n) is ast.Attribute and not n.attr.startswith("_") and n.attr not in ARRAY_ATTRIBUTES:
                    held = dotted(n.value)
                    if held is not None:
                        found.add(held)
            self._object_names = found
        return self._object_names

    # -- expressions (mirrors FunctionFacts.expr_traced) ------------------------------
    def name_traced(self, name: str, env: set[str]) -> bool:
        if name in env:
            return True
        if name in self.locals:
            return False
        parent = self.parent
        while parent is not None:
            if parent.in_trace and name in parent.locals:
                return name in parent.traced_names
            parent = parent.parent
        return False

    def _expr(self, e: ast.AST, env: set[str]) -> bool:  # noqa: C901
        t = lambda x: x is not None and self._expr(x, env)  # noqa: E731
        kind = type(e)
        if kind is ast.Name:
            return self.name_traced(e.id, env)
        if kind is ast.Constant or kind is ast.JoinedStr or kind is ast.Lambda:
            return False
        if kind is ast.Attribute:
            attr = e.attr
            if attr in STATIC_ATTRS:
                return False
            screen = self.screen
            if attr in screen.static_attrs():
                return False  # a property of the module's pytree classes returning a Python value
            value = e.value
            if type(value) is ast.Name:
                receiver, fields = self._receiver if self._receiver is not None else self._self_fields()
                if attr in fields and value.id == receiver:
                    return False  # `self.num_stages`: a field of the class that holds Python data
            return t(value)
        if kind is ast.Subscript:
            parts = e.slice.elts if isinstance(e.slice, ast.Tuple) else [e.slice]
            return t(e.value) or any(
                (t(p.lower) or t(p.upper) or t(p.step)) if isinstance(p, ast.Slice) else t(p) for p in parts
            )
        if kind is ast.Call:
            return self._call(e, env)
        if kind is ast.BinOp:
            return t(e.left) or t(e.right)
        if kind is ast.UnaryOp:
            return t(e.operand)
        if kind is ast.BoolOp:
            return any(t(v) for v in e.values)
        if kind is ast.Compare:
            if all(isinstance(op, (ast.Is, ast.IsNot)) for op in e.ops):
                return False
            operands = (e.left, *e.comparators)
            if any(
                type(x) is ast.JoinedStr
                or (type(x) is ast.Constant and type(x.value) is str)
                or (type(x) is ast.Call and self.screen.names.qualify_ast(x.func) in TREE_KEY_CLASSES)
                for x in operands
            ):
                if not any(type(x) is ast.Name for x in operands):
                    return False  # compares strings (`FunctionFacts.expr_traced`, which also keeps locals)
            return t(e.left) or any(t(c) for c in e.comparators)
        if kind is ast.IfExp:
            return t(e.test) or t(e.body) or t(e.orelse)
        if kind is ast.Tuple or kind is ast.List or kind is ast.Set:
            return any(t(el) for el in e.elts)
        if kind is ast.Dict:
            return any(t(k) for k in e.keys) or any(t(v) for v in e.values)
        if kind is ast.NamedExpr or kind is ast.Starred:
            return t(e.value)
        if kind in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
            inner = set(env)
            for gen in e.generators:
                for name, traced in self.loop_bindings(gen.target, gen.iter, inner):
                    (inner.add if traced else inner.discard)(name)
            parts = [e.key, e.value] if kind is ast.DictComp else [e.elt]
            return any(self._expr(p, inner) for p in parts)
        return False

    def _call(self, e: ast.Call, env: set[str]) -> bool:
        t = lambda x: self._expr(x, env)  # noqa: E731
        qualify = self.screen.names.qualify_ast
        qual = qualify(e.func)
        if returns_untraced(qual):
            return False
        first = e.args[0] if e.args else None
        number = isinstance(first, ast.Constant) and type(first.value) in (int, float)
        if is_folded_on_a_number(qual, number):
            return False
        if isinstance(e.func, ast.Attribute) and is_static_method(e.func.attr, qual):
            return False
        if self.screen.out_of_sight and self._out_of_sight(e.func):
            return False
        args = [*e.args, *(k.value for k in e.keywords)]
        if qual == "getattr" and len(args) >= 2 and isinstance(e.args[1:2] and e.args[1], ast.Constant):
            if len(args) >= 3:
                return False
            attr = e.args[1].value
            if isinstance(attr, str) and attr.isidentifier():
                return attr not in STATIC_ATTRS and t(e.args[0])
        if any(t(a) for a in args):
            return True
        if isinstance(e.func, ast.Attribute) and t(e.func.value):
            return True
        if is_staged_call_name(qual):
            return True
        if isinstance(e.func, ast.Call):
            inner = qualify(e.func.func)
            return is_staged_call_name(inner) or inner in TRACED_RESULT_TRANSFORMS
        return False

    def _out_of_sight(self, func: ast.AST) -> bool:
        """A function imported from a module this file cannot see into, whose result the analysis
        calls UNKNOWN, never traced (`static_helpers.ModuleCallOracle._imported`): its dotted name
        starts with a name a module-level import binds to such a module, and does not end in a
        class name. A call of a local name is left to the default rule (the analysis asks the
        oracle about only the locals it knows are plain helpers)."""
        if type(func) is ast.Name and func.id in self.stored:
            return False
        text = dotted(func)
        return (
            text is not None
            and text.split(".", 1)[0] in self.screen.out_of_sight
            and not text.rsplit(".", 1)[-1][:1].isupper()
        )

    def loop_bindings(self, target: ast.AST, it: ast.AST, env: set[str]) -> list[tuple[str, bool]]:
        """(name, traced) for what a `for` target binds (`FunctionFacts.loop_bindings`): the counter
        of `enumerate` is a Python int, `zip(a, b)` pairs each target element with its own
        iterable, `reversed`/`list`/`tuple`/`sorted` of an iterable iterate it."""
        if type(it) is ast.Call and type(it.func) is ast.Attribute and not it.args and not it.keywords:
            # a mapping's keys are Python values (`FunctionFacts.loop_bindings`)
            if it.func.attr in KEY_METHODS:
                return [(n, False) for n in target_names(target)]
            if it.func.attr in ITEM_METHODS and type(target) in (ast.Tuple, ast.List) and len(target.elts) == 2:
                key, value = target.elts
                if type(key) is not ast.Starred and type(value) is not ast.Starred:
                    traced = self._expr(it.func.value, env)
                    return [(n, False) for n in target_names(key)] + [(n, traced) for n in target_names(value)]
        if type(it) is ast.Call:
            qual = None
            plain = all(k.arg == "strict" for k in it.keywords) and not any(type(a) is ast.Starred for a in it.args)
            if type(target) is ast.Tuple or type(target) is ast.List:
                elements = target.elts
                if plain and it.args and not any(type(el) is ast.Starred for el in elements):
                    qual = self.screen.names.qualify_ast(it.func)
                    if qual == "enumerate" and len(elements) == 2 and len(it.args) == 1:
                        counter = [(n, False) for n in target_names(elements[0])]
                        return counter + self.loop_bindings(elements[1], it.args[0], env)
                    if qual == "zip" and len(elements) == len(it.args):
                        return [pair for el, arg in zip(elements, it.args) for pair in self.loop_bindings(el, arg, env)]
            if plain and len(it.args) == 1:
                qual = qual or self.screen.names.qualify_ast(it.func)
                if qual in _ITERATING_CALLS:
                    return self.loop_bindings(target, it.args[0], env)
        traced = self._expr(it, env)
        return [(n, traced) for n in target_names(target)]

    # -- the traced set of this function's own body ------------------------------------
    def settle(self) -> None:
        """Grow `traced_names` to a fixpoint over the own body's bindings (order ignored)."""
        env = self.traced_names
        env |= self.traced_params - self.screen.static_params(self)
        facts = self._facts()
        # The fixpoint of a function outside any def depends on its body, the imports' names, the
        # attributes static on any object or on `self` (the module's classes) and the names it
        # starts from only: an edit elsewhere in the document finds it settled.
        key = None
        if self.parent is None:
            screen = self.screen
            statics = screen.static_attrs()
            key = (screen.names_key, statics, self._self_fields(), frozenset(env))
        if key is not None and key in facts.settled:
            env |= facts.settled[key]
            return
        bindings = facts.bindings
        changed = True
        while changed:
            before = len(env)
            for n in bindings:
                for name in self._bound_traced(n, env):
                    env.add(name)
            changed = len(env) != before
        if key is not None:
            facts.settled[key] = frozenset(env)

    def _bound_traced(self, n: ast.AST, env: set[str]) -> list[str]:
        t = lambda x: self._expr(x, env)  # noqa: E731
        if isinstance(n, ast.Assign):
            return [name for target in n.targets for name in _bind_names(target)] if t(n.value) else []
        if isinstance(n, ast.AnnAssign):
            return _bind_names(n.target) if n.value is not None and t(n.value) else []
        if isinstance(n, ast.AugAssign):
            return _bind_names(n.target) if t(n.value) or t(n.target) else []
        if isinstance(n, (ast.For, ast.AsyncFor)):
            return [name for name, traced in self.loop_bindings(n.target, n.iter, env) if traced]
        if isinstance(n, (ast.With, ast.AsyncWith)):
            return [name for item in n.items if item.optional_vars is not None and t(item.context_expr)
                    for name in _bind_names(item.optional_vars)]
        if isinstance(n, ast.NamedExpr):
            return _bind_names(n.target) if t(n.value) else []
        return []


_BINDERS = (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith, ast.NamedExpr)


def target_names(target: ast.AST) -> list[str]:
    """Names an assignment target binds (`a`, `a, (b, *c)`), on the stdlib AST."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for el in target.elts for n in target_names(el)]
    if isinstance(target, ast.Starred):
        return target_names(target.value)
    return []


def _bind_names(target: ast.AST) -> list[str]:
    """Names a traced assignment to `target` makes traced: `x[i] = v` and `x.a = v` taint `x`."""
    names = target_names(target)
    if names or isinstance(target, (ast.Tuple, ast.List, ast.Starred)):
        return names
    while isinstance(target, (ast.Subscript, ast.Attribute)):
        target = target.value
    return [target.id] if isinstance(target, ast.Name) else []


def function_locals(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The parameters of `fn` and every local its body binds by statement."""
    a = fn.args
    found = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    found.update(x.arg for x in (a.vararg, a.kwarg) if x is not None)
    return found | _assigned_names(fn.body)


def _assigned_names(body: list[ast.stmt]) -> set[str]:
    """Every local a function body binds by statement (as `body_facts.assigned_names` does)."""
    found: set[str] = set()
    stack = list(body)
    while stack:
        s = stack.pop()
        if isinstance(s, ast.Assign):
            for t in s.targets:
                found.update(target_names(t))
        elif isinstance(s, ast.AugAssign) or (isinstance(s, ast.AnnAssign) and s.value is not None):
            found.update(target_names(s.target))
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            for alias in s.names:
                if alias.name != "*":
                    found.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(s.name)
            continue
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            found.update(target_names(s.target))
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                if item.optional_vars is not None:
                    found.update(target_names(item.optional_vars))
        elif isinstance(s, ast.ExceptHandler) and s.name:
            found.add(s.name)
        for name in astscan.STATEMENT_BLOCKS:
            inner = getattr(s, name, None)
            if type(inner) is list:
                stack.extend(inner)
    return found


def is_sequence_value(e: ast.AST, qualify) -> bool:
    """A display, a comprehension of a list/set/dict, or `tuple(...)`/`list(...)`/`dict(...)`/
    `set(...)`/`sorted(...)` (`FunctionFacts.is_sequence` but a name)."""
    kind = type(e)
    if kind in (ast.Tuple, ast.List, ast.ListComp, ast.Dict, ast.Set, ast.DictComp, ast.SetComp):
        return True
    return kind is ast.Call and qualify(e.func) in _SEQUENCE_CALLS


def _non_sequence_bindings(node: ast.AST, own: list[ast.AST], qualify) -> set[str]:
    """Names `node`'s own body binds in any way but a plain-name `=`/`+=`/`:=`/annotated
    assignment of a sequence value (an annotated one also when annotated as a sequence)."""
    if isinstance(node, ast.Lambda):
        return {n.id for n in own if type(n) is ast.Name and type(n.ctx) is ast.Store}
    sequence_targets: set[int] = set()
    other: set[str] = set()
    stores: list[ast.Name] = []
    for n in own:
        kind = type(n)
        if kind is ast.Name:
            if type(n.ctx) is ast.Store:
                stores.append(n)
        elif kind is ast.Assign or kind is ast.AugAssign or kind is ast.AnnAssign or kind is ast.NamedExpr:
            value = n.value
            sequence = value is not None and is_sequence_value(value, qualify)
            if kind is ast.AnnAssign and value is not None and not sequence:
                head = n.annotation.value if type(n.annotation) is ast.Subscript else n.annotation
                sequence = (qualify(head) or "").rsplit(".", 1)[-1] in SEQUENCE_TYPES
            if sequence:
                for target in n.targets if kind is ast.Assign else [n.target]:
                    if type(target) is ast.Name:
                        sequence_targets.add(id(target))
        elif kind is ast.Import or kind is ast.ImportFrom:
            other.update(alias.asname or alias.name.split(".")[0] for alias in n.names)
        elif (kind is ast.ExceptHandler or kind is ast.MatchAs or kind is ast.MatchStar) and n.name:
            other.add(n.name)
        elif kind is ast.MatchMapping and n.rest:
            other.add(n.rest)
        elif kind is ast.Global or kind is ast.Nonlocal:
            other.update(n.names)
    other.update(n.id for n in stores if id(n) not in sequence_targets)
    for st in astscan.statements(node):  # defs and classes, nested ones too
        if type(st) in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef):
            other.add(st.name)
    return other
