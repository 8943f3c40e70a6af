"""Scope and loop structure of one module: parents, enclosing loops and functions, bindings, free names.

Built once per file on the libcst tree (`ctx.fact(ScopeIndex, ScopeIndex.of)`) and
shared by rules: jit placement asks "is this call inside a loop of its function, and
which captured names change per iteration?"; control-flow rewrites ask "which names
does this loop assign (its carry) and which names does this body read from outside?".

The model is Python's own, simplified where it rarely matters: a function, lambda,
class body or comprehension is a scope; a name is local to the scope that binds it
(assignment, augmented assignment, `for`/`with`/`except` target, import, `def`,
`class`, parameter, walrus) unless declared `global`/`nonlocal`. Comprehension
targets are local to the comprehension; a walrus inside a comprehension binds in
the enclosing function, as in Python.
"""

from __future__ import annotations

import builtins
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import libcst as cst

from jaxfix.analysis.walk import TreeIndex, walk

SCOPE_NODES = (
    cst.Module,
    cst.FunctionDef,
    cst.Lambda,
    cst.ClassDef,
    cst.ListComp,
    cst.SetComp,
    cst.DictComp,
    cst.GeneratorExp,
)
FUNCTION_NODES = (cst.FunctionDef, cst.Lambda)
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)
LOOP_NODES = (cst.For, cst.While, *COMPREHENSIONS)
BUILTIN_NAMES = frozenset(dir(builtins))
# libcst's node classes are concrete leaves: `type(node) in` these is `isinstance(node, ...)`
_SCOPE_TYPES = frozenset(SCOPE_NODES)
_LOOP_OR_SCOPE_TYPES = frozenset({*SCOPE_NODES, *LOOP_NODES})


@dataclass
class ScopeInfo:
    """What one scope binds and reads. `bindings` maps a name to the nodes that bind it."""

    node: cst.CSTNode
    bindings: dict[str, list[cst.CSTNode]] = field(default_factory=dict)
    params: list[str] = field(default_factory=list)
    reads: set[str] = field(default_factory=set)  # names referenced directly in this scope
    globals: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)
    children: list[cst.CSTNode] = field(default_factory=list)

    def binds(self, name: str) -> bool:
        return (name in self.bindings or name in self.params) and name not in self.globals | self.nonlocals


class ScopeIndex:
    """Parents of every node plus lazily computed per-scope facts."""

    def __init__(self, module: cst.Module, index: TreeIndex | None = None) -> None:
        self.module = module
        self._index = TreeIndex(module) if index is None else index
        self._parents = self._index.parents
        self._scopes: dict[cst.CSTNode, ScopeInfo] = {}
        self._global_decls: set[str] | None = None

    @classmethod
    def of(cls, ctx) -> "ScopeIndex":
        return cls(ctx.module, ctx.tree_index)

    def of_type(self, *node_types: type) -> list[cst.CSTNode]:
        """The module's nodes of these (concrete) types in source order (`TreeIndex.of_type`)."""
        return self._index.of_type(*node_types)

    # -- structure ----------------------------------------------------------
    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self._parents.get(node)

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self._parents.get(node)
        while current is not None:
            yield current
            current = self._parents.get(current)

    def _path(self, node: cst.CSTNode) -> Iterator[tuple[cst.CSTNode, cst.CSTNode]]:
        """(ancestor, the child of it on the way to `node`), innermost first."""
        child = node
        for anc in self.ancestors(node):
            yield anc, child
            child = anc

    def enclosing_scope(self, node: cst.CSTNode) -> cst.CSTNode:
        """The scope whose code evaluates `node` (a def's decorators and defaults belong to the outer scope)."""
        for anc, child in self._path(node):
            kind = type(anc)  # concrete classes: a type test is `isinstance` without ABCMeta's check
            if kind not in _SCOPE_TYPES:
                continue
            if kind is cst.Module:
                return anc
            if kind is cst.FunctionDef or kind is cst.ClassDef or kind is cst.Lambda:
                if child is anc.body:
                    return anc
                continue
            if not self.in_first_iter(anc, node):  # a comprehension
                return anc
        return self.module

    def enclosing_function(self, node: cst.CSTNode) -> cst.FunctionDef | cst.Lambda | None:
        scope = self.enclosing_scope(node)
        while isinstance(scope, COMPREHENSIONS):
            scope = self.enclosing_scope(scope)
        return scope if isinstance(scope, FUNCTION_NODES) else None

    def enclosing_loops(self, node: cst.CSTNode) -> list[cst.CSTNode]:
        """Loops that run `node` once per iteration, innermost first, up to the enclosing function.

        A `for` loop's iterable and `else` run once, so they are not inside it; a
        `while` test runs per iteration. In a comprehension everything but the first
        iterable runs per element.
        """
        loops: list[cst.CSTNode] = []
        for anc, child in self._path(node):
            kind = type(anc)  # concrete classes: a type test is `isinstance` without ABCMeta's check
            if kind not in _LOOP_OR_SCOPE_TYPES:
                continue
            if kind is cst.FunctionDef or kind is cst.ClassDef or kind is cst.Lambda:
                if child is not anc.body:
                    continue  # decorators/defaults (a lambda's defaults) run in the outer scope
                break
            if kind is cst.Module:
                break
            if kind is cst.For:
                if child is anc.body or child is anc.target:
                    loops.append(anc)
            elif kind is cst.While:
                if child is anc.body or child is anc.test:
                    loops.append(anc)
            elif not self.in_first_iter(anc, node):  # a comprehension
                loops.append(anc)
        return loops

    def in_first_iter(self, comp: cst.CSTNode, node: cst.CSTNode) -> bool:
        first = comp.for_in.iter
        return node is first or any(a is first for a in self.ancestors(node))

    def statement_of(self, node: cst.CSTNode) -> cst.CSTNode:
        """The innermost statement (simple line or compound statement) containing `node`."""
        if isinstance(node, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
            return node
        for anc in self.ancestors(node):
            if isinstance(anc, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return anc
        raise ValueError("node is not inside a statement")

    def statement_in(self, node: cst.CSTNode, owner: cst.CSTNode) -> cst.CSTNode:
        """The statement directly in `owner`'s body (owner: Module, def, loop...) that contains `node`."""
        previous = node
        for anc in self.ancestors(node):
            if anc is owner:
                return previous
            if isinstance(anc, (cst.IndentedBlock, cst.SimpleStatementSuite)) and self.parent(anc) is owner:
                return previous
            previous = anc
        raise ValueError("node is not inside owner")

    def top_level_statement(self, node: cst.CSTNode) -> cst.CSTNode:
        return self.statement_in(node, self.module)

    # -- names ----------------------------------------------------------------
    def scope_info(self, scope: cst.CSTNode) -> ScopeInfo:
        info = self._scopes.get(scope)
        if info is None:
            info = _collect_scope(scope)
            self._scopes[scope] = info
        return info

    def resolve(self, name: str, at: cst.CSTNode) -> cst.CSTNode | None:
        """The scope whose binding `name` at `at` refers to (class scopes are skipped for nested code); None for builtins/unbound."""
        scope = self.enclosing_scope(at)
        first = True
        while True:
            info = self.scope_info(scope)
            if name in info.globals:
                return self.module if name in self.scope_info(self.module).bindings else None
            if (first or not isinstance(scope, cst.ClassDef)) and info.binds(name):
                return scope
            if isinstance(scope, cst.Module):
                return None
            first = False
            scope = self.enclosing_scope(scope)

    def sole_value(self, name: str, at: cst.CSTNode) -> cst.BaseExpression | None:
        """The value of `name = value` when that plain assignment is the only binding of `name` in
        the scope `at` reads it from (`counts = (1, 2, 4)`, then `for n in counts:`); else None."""
        scope = self.resolve(name, at)
        if scope is None:
            return None
        bindings = self.scope_info(scope).bindings.get(name, [])
        if len(bindings) != 1 or not isinstance(bindings[0], cst.Assign) or len(bindings[0].targets) != 1:
            return None
        return bindings[0].value if isinstance(bindings[0].targets[0].target, cst.Name) else None

    def free_names(self, scope: cst.CSTNode) -> set[str]:
        """Names read in `scope` (or its nested scopes) that `scope` does not bind itself."""
        info = self.scope_info(scope)
        names = set(info.reads)
        for child in info.children:
            names |= self.free_names(child)
        return {n for n in names if not info.binds(n) or n in info.globals | info.nonlocals}

    def assigned_in(self, node: cst.CSTNode) -> set[str]:
        """Names bound by code under `node` in `node`'s own scope (loop bodies: the loop-carried/variant names)."""
        if isinstance(node, COMPREHENSIONS):
            names: set[str] = set()
            comp_for = node.for_in
            while comp_for is not None:
                names.update(name for name, _ in _target_names(comp_for.target))
                comp_for = comp_for.inner_for_in
            return names
        collector = _Binder()
        walk(node, collector)
        return set(collector.bindings)

    def global_declarations(self) -> set[str]:
        """Every name some function declares `global` (its module binding may change at run time)."""
        if self._global_decls is None:
            self._global_decls = {item.name.value for node in self.of_type(cst.Global) for item in node.names}
        return self._global_decls

    def module_bindings(self, name: str) -> list[cst.CSTNode]:
        """Top-level statements of the module that bind `name`."""
        info = self.scope_info(self.module)
        return [self.statement_in(node, self.module) for node in info.bindings.get(name, [])]


def _target_names(target: cst.BaseExpression) -> Iterator[tuple[str, cst.CSTNode]]:
    if isinstance(target, cst.Name):
        yield target.value, target
    elif isinstance(target, (cst.Tuple, cst.List)):
        for element in target.elements:
            yield from _target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)


class _NameVisitor(cst.CSTVisitor):
    """Hands `found` every `Name` under a node except attribute and keyword names (`a.b` holds
    `a`, `f(k=v)` holds `f` and `v`), and, with `params=False`, parameter names (a parameter's
    default is still searched)."""

    def __init__(self, found: Callable[[cst.Name], None], params: bool = True) -> None:
        super().__init__()
        self._found = found
        self._params = params

    def visit_Name(self, n: cst.Name) -> None:
        self._found(n)

    def visit_Attribute(self, n: cst.Attribute) -> bool:
        walk(n.value, self)
        return False

    def visit_Arg(self, n: cst.Arg) -> bool:
        walk(n.value, self)
        return False

    def visit_Param(self, n: cst.Param) -> bool:
        if self._params:
            return True
        if n.default is not None:
            walk(n.default, self)
        return False


class _Binder(_NameVisitor):
    """Bindings and reads of one scope; nested scopes are recorded as children, not entered
    (except the parts of them that run in this scope: decorators, defaults, first iterable)."""

    def __init__(self) -> None:
        # reads: any Name that is not an attribute/keyword/definition name
        super().__init__(lambda name: self.reads.add(name.value))
        self.bindings: dict[str, list[cst.CSTNode]] = {}
        self.reads: set[str] = set()
        self.globals: set[str] = set()
        self.nonlocals: set[str] = set()
        self.children: list[cst.CSTNode] = []

    def bind(self, name: str, node: cst.CSTNode) -> None:
        self.bindings.setdefault(name, []).append(node)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> bool:
        if node.asname is not None and isinstance(node.asname.name, cst.Name):
            self.bind(node.asname.name.value, node)
        else:
            name = node.name
            while isinstance(name, cst.Attribute):
                name = name.value
            if isinstance(name, cst.Name):
                self.bind(name.value, node)
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        if isinstance(node.names, cst.ImportStar):
            return False
        for alias in node.names:
            walk(alias, self)
        return False

    def visit_Global(self, node: cst.Global) -> bool:
        self.globals.update(item.name.value for item in node.names)
        return False

    def visit_Nonlocal(self, node: cst.Nonlocal) -> bool:
        self.nonlocals.update(item.name.value for item in node.names)
        return False

    def visit_Assign(self, node: cst.Assign) -> None:
        for target in node.targets:
            for name, n in _target_names(target.target):
                self.bind(name, node)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        for name, n in _target_names(node.target):
            self.bind(name, node)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        for name, n in _target_names(node.target):
            self.bind(name, node)

    def visit_For(self, node: cst.For) -> None:
        for name, n in _target_names(node.target):
            self.bind(name, node)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            for name, n in _target_names(node.asname.name):
                self.bind(name, node)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        for name, n in _target_names(node.target):
            self.bind(name, node)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None and isinstance(node.name.name, cst.Name):
            self.bind(node.name.name.value, node)

    def visit_Del(self, node: cst.Del) -> None:
        for name, n in _target_names(node.target):
            self.bind(name, node)

    # nested scopes
    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self.bind(node.name.value, node)
        for dec in node.decorators:
            walk(dec, self)
        _visit_param_defaults(node.params, self)
        if node.returns is not None:
            walk(node.returns, self)
        self.children.append(node)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self.bind(node.name.value, node)
        for dec in node.decorators:
            walk(dec, self)
        for arg in (*node.bases, *node.keywords):
            walk(arg, self)
        self.children.append(node)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        _visit_param_defaults(node.params, self)
        self.children.append(node)
        return False

    def _comprehension(self, node: cst.CSTNode) -> bool:
        walk(node.for_in.iter, self)
        self.children.append(node)
        # a walrus inside a comprehension binds in the enclosing scope
        walrus = _WalrusFinder()
        walk(node, walrus)
        for name, n in walrus.found:
            self.bind(name, n)
        return False

    visit_ListComp = _comprehension
    visit_SetComp = _comprehension
    visit_DictComp = _comprehension
    visit_GeneratorExp = _comprehension


class _WalrusFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[tuple[str, cst.CSTNode]] = []

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self.found.extend(_target_names(node.target))

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False


def _visit_param_defaults(params: cst.Parameters, visitor: cst.CSTVisitor) -> None:
    for param in (*params.posonly_params, *params.params, *params.kwonly_params):
        if param.default is not None:
            walk(param.default, visitor)
        if param.annotation is not None:
            walk(param.annotation, visitor)


def param_names(params: cst.Parameters) -> list[str]:
    names = [p.name.value for p in (*params.posonly_params, *params.params)]
    if isinstance(params.star_arg, cst.Param):
        names.append(params.star_arg.name.value)
    names.extend(p.name.value for p in params.kwonly_params)
    if params.star_kwarg is not None:
        names.append(params.star_kwarg.name.value)
    return names


def _collect_scope(scope: cst.CSTNode) -> ScopeInfo:
    binder = _Binder()
    info = ScopeInfo(node=scope)
    if isinstance(scope, cst.Module):
        for stmt in scope.body:
            walk(stmt, binder)
    elif isinstance(scope, (cst.FunctionDef, cst.Lambda)):
        info.params = param_names(scope.params)
        walk(scope.body, binder)
    elif isinstance(scope, cst.ClassDef):
        walk(scope.body, binder)
    elif isinstance(scope, COMPREHENSIONS):
        # targets of every `for` clause are local; the first iterable belongs to the outer scope
        comp_for: cst.CompFor | None = scope.for_in
        first = True
        while comp_for is not None:
            for name, n in _target_names(comp_for.target):
                binder.bind(name, comp_for)
            if not first:
                walk(comp_for.iter, binder)
            for cond in comp_for.ifs:
                walk(cond, binder)
            first = False
            comp_for = comp_for.inner_for_in
        for part in ("elt", "key", "value"):
            value = getattr(scope, part, None)
            if value is not None:
                walk(value, binder)
        # walrus targets bind outside; drop them here
        for name, nodes in list(binder.bindings.items()):
            kept = [n for n in nodes if not isinstance(n, cst.NamedExpr)]
            if kept:
                binder.bindings[name] = kept
            else:
                del binder.bindings[name]
    info.bindings = binder.bindings
    info.reads = binder.reads
    info.globals = binder.globals
    info.nonlocals = binder.nonlocals
    info.children = binder.children
    return info


def names_read(node: cst.CSTNode) -> set[str]:
    """Names loaded anywhere in `node`, nested scopes included; attribute and keyword names are
    not reads (`a.b` reads `a`, `f(k=v)` reads `f` and `v`)."""
    names: set[str] = set()
    walk(node, _NameVisitor(lambda n: names.add(n.value)))
    return names


def name_uses(node: cst.CSTNode, name: str) -> list[cst.Name]:
    """The `Name` nodes under `node` that spell `name`, loads and bindings alike, in source order;
    attribute, keyword and parameter names are not uses (a parameter's default is searched)."""
    found: list[cst.Name] = []
    walk(node, _NameVisitor(lambda n: found.append(n) if n.value == name else None, params=False))
    return found


def name_counts(node: cst.CSTNode) -> Counter[str]:
    """`len(name_uses(node, name))` for every name at once, in one walk (for a caller that asks
    about many names, or about the same node many times)."""
    found: list[str] = []
    walk(node, _NameVisitor(lambda n: found.append(n.value), params=False))
    return Counter(found)
