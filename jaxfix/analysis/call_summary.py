"""What one module of a project calls and where its traces start, on the stdlib AST: the half
of the call graph (`callgraph`) that reads a single module.

`summarize_calls` (cached with the project index) records every module-level function and
method, its trace entries (a transform decorator or a `jax.jit(f)` call, a `lax` body), and the
calls out of its own body whose target resolves by name: an import, a def or class of the
module, `self.method`, a method of an instance built from a known class (`Cls(...).m()`,
`x = Cls(...); x.m()`, a module-level instance called as `H(t)`). Each argument of such a call
carries the parameters of the caller its value depends on, not through shapes, dtypes or `len`
(`x.shape[0]` depends on nothing traced).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from jaxfix.analysis import astscan
from jaxfix.analysis.pytrees import dotted, module_bindings
from jaxfix.analysis.staged_calls import is_staged_call_name
from jaxfix.analysis.static_values import is_static_attr, returns_untraced
from jaxfix.analysis.transforms import (
    FUNCTION_WRAPPERS,
    JIT_NAMES,
    LAX_BODIES,
    OPTION_DISPLAYS,
    PARTIAL_NAMES,
    STATIC_ARGNAMES_OPTIONS,
    STATIC_ARGNUMS_OPTIONS,
    VMAP_NAMES,
    keeps_parameters,
)

# transforms whose function runs on tracers (each parameter traced but the static ones)
TRACING = JIT_NAMES | VMAP_NAMES
# transforms that keep the function traceable and are traced when applied under one of TRACING
WRAPPING = FUNCTION_WRAPPERS
BODIES = LAX_BODIES
# the last name of every transform and lax body: `x.y.name(...)` qualifies to one of them only if
# `name` is here (qualifying replaces the head of a dotted name, never its last part)
_LAST_NAMES = frozenset(q.rsplit(".", 1)[-1] for q in (*TRACING, *BODIES))
PARTIAL = PARTIAL_NAMES
STAGED = "*"  # a dependency: a value a jax function made (traced whenever the caller is)


@dataclass(frozen=True)
class CallEdge:
    """One call out of a function: its target (qualified as far as the module knows it), whether
    the target receives its instance implicitly (`self.m(x)`, `Cls(x)`), and per argument slot
    (a position or a keyword) the caller's parameters it depends on."""

    target: str
    receiver: str | None  # "self": a method of the caller's own instance; "new": a construction / instance
    line: int
    args: tuple[tuple[int | str, frozenset[str]], ...]
    receiver_deps: frozenset[str] = frozenset()  # what the instance itself depends on (`h(t)` on traced `h`)


@dataclass(frozen=True)
class FunctionCalls:
    name: str  # "f" or "Cls.m"
    line: int
    positional: tuple[str, ...]
    params: tuple[str, ...]
    class_name: str | None
    is_method: bool  # a plain method: its first parameter is the instance
    calls: tuple[CallEdge, ...]
    # parameters with a literal default (`mode="mse"`): what a transform's caller leaves out stays
    # that Python value, and whether any call passes them is not known here (so never claimed traced)
    literal_defaults: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Entry:
    """A function a transform enters in its own module: which parameters are traced, and how."""

    traced: frozenset[str]
    how: str  # "jitted", "vmapped", "a scan body", ...
    line: int


@dataclass(frozen=True)
class ForeignEntry:
    """A function of another module of the project that a transform here enters:
    `jax.jit(partial(loss_fn, cfg))` with `loss_fn` imported. Its parameters are known only
    there, so what the call leaves untraced is kept: the positions and names a `partial` binds,
    and the transform's static arguments."""

    bound_positional: int
    bound_names: frozenset[str]
    statics: "StaticSpec"
    how: str
    line: int


@dataclass(frozen=True)
class StaticSpec:
    """Literal `static_argnames` / `static_argnums` of a transform call; `unknown` when they are
    not literals (then every parameter counts as static: nothing is claimed)."""

    names: frozenset[str] = frozenset()
    nums: tuple[int, ...] = ()
    unknown: bool = False

    def of(self, info: "FunctionCalls") -> set[str]:
        if self.unknown:
            return set(info.params)
        n = len(info.positional)
        return set(self.names) | {info.positional[i] for i in self.nums if -n <= i < n}


@dataclass(frozen=True)
class CallSummary:
    """What the project needs to know about one module's calls."""

    module: str
    path: str
    functions: dict[str, FunctionCalls] = field(default_factory=dict)
    entries: dict[str, Entry] = field(default_factory=dict)
    classes: dict[str, tuple[str, ...]] = field(default_factory=dict)  # class -> qualified bases
    foreign: dict[str, ForeignEntry] = field(default_factory=dict)  # qualified name -> entry

    @property
    def has_entries(self) -> bool:
        """Does a transform here enter a function of the project (a root of the propagation)?"""
        return bool(self.entries or self.foreign)


def summarize_calls(
    tree: ast.Module, module_name: str, path: str, is_package: bool = False, *, calls: bool = True, lazy: bool = False,
    entries_of: CallSummary | None = None, text: bytes | str | None = None,
) -> CallSummary:
    """The module's functions, calls and entries; with `calls=False`, the same `entries` for a
    fraction of the cost: whether the module is a root of the propagation is all a project needs
    to know about most modules. Its `functions` then hold only what an entry names (none of their
    calls, the others made on first lookup: `_Functions`). With `lazy`, each function's calls are
    found when the propagation first looks it up (a module it reaches is rarely reached whole).
    `entries_of`: this module's `calls=False` summary, whose entries are taken, not found again.
    `text` (with `lazy`): what `tree` was parsed from, so the summary is pickled lazy too (`_Unparsed`)."""
    bindings = module_bindings(tree, module_name, is_package)
    local: dict[str, str] = {}  # module-level def / class / instance -> qualified
    instances: dict[str, str] = {}  # module-level `H = Cls(...)` -> the qualified class expression
    classes: dict[str, tuple[str, ...]] = {}
    defs: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str | None]] = []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            local[node.name] = f"{module_name}.{node.name}"
            defs.append((node, None))
        elif isinstance(node, ast.ClassDef):
            local[node.name] = f"{module_name}.{node.name}"
            classes[node.name] = tuple(q for q in (_qualify(b, bindings, {}) for b in node.bases) if q)
            defs.extend((child, node.name) for child in node.body if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)))
    names = {**bindings, **local}
    if not calls:
        summary = CallSummary(module=module_name, path=path, functions=_Functions(defs), classes=classes)
        _find_entries(tree, module_name, names, summary)
        return summary
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            if isinstance(node.value, ast.Call):
                ctor = _qualify(node.value.func, names, {})
                if ctor is not None:
                    instances[node.targets[0].id] = ctor
    if lazy:
        remake = None if text is None else (text, module_name, path, is_package)
        made = _Functions(defs, lambda node, cls: _function_calls(node, cls, module_name, names, instances), remake)
        summary = CallSummary(module=module_name, path=path, functions=made, classes=classes)
    else:
        summary = CallSummary(module=module_name, path=path, classes=classes)
        for node, cls in defs:
            info = _function_calls(node, cls, module_name, names, instances)
            summary.functions[info.name] = info
    if entries_of is not None:
        summary.entries.update(entries_of.entries)
        summary.foreign.update(entries_of.foreign)
    else:
        _find_entries(tree, module_name, names, summary)
    return summary


class _Functions(dict):
    """`CallSummary.functions` of `summarize_calls(calls=False)`: a function's signature
    (`_function`) made when an entry looks it up, not for each of the module's defs (most of
    them are never entered). The lookups `_find_entries` makes (`[name]`, `get`) see the same
    functions the full summary holds, the last def of a name winning as there."""

    def __init__(
        self,
        defs: list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, str | None]],
        make: Callable[[ast.AST, str | None], FunctionCalls] | None = None,
        remake: tuple[bytes | str, str, str, bool] | None = None,
    ) -> None:
        super().__init__()
        self._defs = {(node.name if cls is None else f"{cls}.{node.name}"): (node, cls) for node, cls in defs}
        self._make = make or _function  # or `_function_calls`, for a lazy full summary
        self._remake = remake  # a lazy full summary's (text, module, path, is_package): `__reduce__`

    def __missing__(self, name: str) -> FunctionCalls:
        node, cls = self._defs[name]  # KeyError, as a plain dict raises, for a name with no def
        try:
            info = self._make(node, cls)
        except RecursionError:  # code nested too deeply to summarise: as if the module had no such def
            raise KeyError(name) from None
        self[name] = info
        return info

    def get(self, name: str, default: FunctionCalls | None = None) -> FunctionCalls | None:  # type: ignore[override]
        try:
            return self[name] if name in self._defs else default
        except KeyError:
            return default

    def __contains__(self, name: object) -> bool:
        return name in self._defs

    def __reduce__(self):
        """Pickled whole, as the plain dict the eager summary holds (the same order, the last def
        of a name winning): a summary store keeps no tree. A lazy full summary made with its
        module's text is pickled lazy (`_Unparsed`): the functions found so far, and the text."""
        if self._remake is not None:
            return _Unparsed, (list(self._defs), dict(self), self._remake)
        return dict, ({name: self[name] for name in self._defs},)


class _Unparsed(_Functions):
    """A lazy full summary's `_Functions` read back from a pickle (the summary store): the
    functions looked up before it was pickled, and the module's text, parsed on the first lookup
    of another (its calls found as `summarize_calls(lazy=True)` finds them in the same text). Made
    whole only to be pickled, the summaries of the modules a first check of the jax/flax/optax
    corpus reached cost 0.17 s after the run, in the main process (issue #33 item 7)."""

    def __init__(self, names: list[str], found: dict[str, FunctionCalls], remake: tuple[bytes | str, str, str, bool]) -> None:
        dict.__init__(self, found)
        self._defs = dict.fromkeys(names)
        self._remake = remake
        self._fresh: _Functions | None = None

    def __missing__(self, name: str) -> FunctionCalls:
        if name not in self._defs:
            raise KeyError(name)
        if self._fresh is None:
            text, module, path, is_package = self._remake
            tree = ast.parse(text, filename=path)
            self._fresh = summarize_calls(tree, module, path, is_package, lazy=True, text=text).functions
        info = self._fresh[name]  # KeyError for a def nested too deeply, as `_Functions` raises it
        self[name] = info
        return info


def _qualify(node: ast.AST, names: dict[str, str], types: dict[str, str]) -> str | None:
    text = dotted(node)
    if text is None:
        return None
    head, _, rest = text.partition(".")
    target = types.get(head) or names.get(head)
    if target is None:
        return None
    return f"{target}.{rest}" if rest else target


def _signature(node) -> tuple[tuple[str, ...], tuple[str, ...]]:
    a = node.args
    positional = tuple(p.arg for p in (*a.posonlyargs, *a.args))
    params = positional + tuple(p.arg for p in a.kwonlyargs)
    return positional, params


def _function(node, cls: str | None) -> FunctionCalls:
    """A function's signature, without its calls."""
    positional, params = _signature(node)
    decos = {dotted(d) for d in node.decorator_list}
    is_method = cls is not None and bool(positional) and not decos & {"staticmethod", "classmethod"}
    name = node.name if cls is None else f"{cls}.{node.name}"
    a = node.args
    with_default = [*zip(positional[len(positional) - len(a.defaults) :], a.defaults)]
    with_default += [(p.arg, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
    literal = frozenset(p for p, d in with_default if _is_literal(d))
    return FunctionCalls(name, node.lineno, positional, params, cls, is_method, (), literal)


def _is_literal(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant):
        return True
    return isinstance(node, ast.Tuple) and all(_is_literal(e) for e in node.elts)


def _function_calls(node, cls: str | None, module: str, names: dict[str, str], instances: dict[str, str]) -> FunctionCalls:
    bare = _function(node, cls)
    positional, params, is_method = bare.positional, bare.params, bare.is_method
    own = astscan.own_nodes(node)
    self_name = positional[0] if is_method else None
    external = _external_prefixes(module)
    candidates = [n for n in own if type(n) is ast.Call and _may_reach_project(n.func, names, self_name, external)]
    if not candidates:  # most functions call only jax, numpy and builtins: no dependencies to compute
        return bare
    deps = _Deps(params, names, own, module.split(".", 1)[0] + ".")
    types: dict[str, str] = {}  # local `x = Cls(...)` -> qualified class expression
    for n in own:
        if type(n) is ast.Assign and len(n.targets) == 1 and type(n.targets[0]) is ast.Name:
            if type(n.value) is ast.Call and isinstance(n.value.func, (ast.Name, ast.Attribute)):
                ctor = _qualify(n.value.func, names, {})
                if ctor is not None:
                    types[n.targets[0].id] = ctor
    calls: list[CallEdge] = []
    for n in candidates:
        edge = _edge(n, cls, module, names, types, instances, self_name, deps, external)
        if edge is not None:
            calls.append(edge)
    return replace(bare, calls=tuple(calls))


# Libraries a project calls but does not define (unless it is one of them: checking flax itself)
_LIBRARIES = ("jax", "jaxlib", "numpy", "scipy", "equinox", "flax", "optax", "functools", "math", "typing", "builtins")


def _external_prefixes(module: str) -> tuple[str, ...]:
    top = module.split(".", 1)[0]
    return tuple(f"{lib}." for lib in _LIBRARIES if lib != top)


def _may_reach_project(func: ast.AST, names: dict[str, str], self_name: str | None, external) -> bool:
    """Could a call of `func` run a function of the project (not jax, numpy, a builtin)?"""
    head = func
    while type(head) is ast.Attribute or type(head) is ast.Call:
        head = head.value if type(head) is ast.Attribute else head.func
    if type(head) is not ast.Name:
        return False
    if head.id == self_name:
        return True
    target = names.get(head.id)
    if target is None:
        return type(func) is ast.Attribute  # `x.m()` on a local built from a known class
    return not (target + ".").startswith(external)


def _edge(call: ast.Call, cls, module, names, types, instances, self_name, deps: "_Deps", external) -> CallEdge | None:
    func = call.func
    receiver: str | None = None
    receiver_deps: frozenset[str] = frozenset()
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == self_name:
        target, receiver = f"{module}.{cls}.{func.attr}", "self"
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call):
        ctor = _qualify(func.value.func, names, {})  # `Cls(...).method(...)`
        if ctor is None:
            return None
        target, receiver = f"{ctor}.{func.attr}", "new"
        receiver_deps = deps.of(func.value)
    elif isinstance(func, ast.Name) and func.id in instances and func.id not in deps.local_names:
        target, receiver = f"{instances[func.id]}.__call__", "new"  # a module-level instance: `H(t)`
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in types:
        target, receiver = f"{types[func.value.id]}.{func.attr}", "new"
        receiver_deps = deps.of(func.value)
    else:
        if isinstance(func, ast.Name) and func.id in deps.local_names:
            return None  # a local or parameter: not the module's binding
        target = _qualify(func, names, {})
        if target is None or target.startswith(external):
            return None
    args: list[tuple[int | str, frozenset[str]]] = []
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return None  # which parameter gets what is unknown: not followed (precision first)
        args.append((i, deps.of(arg)))
    for kw in call.keywords:
        if kw.arg is None:
            return None
        args.append((kw.arg, deps.of(kw.value)))
    return CallEdge(target, receiver, call.lineno, tuple(args), receiver_deps)


class _Deps:
    """The parameters each value of a function depends on, flow-insensitively (every binding of
    a local counts), not through shapes, dtypes, `len` or other static queries."""

    def __init__(self, params: tuple[str, ...], names: dict[str, str], own: list[ast.AST], package: str = "") -> None:
        """`package`: the module's top-level package and a dot; a call into it is the project's own
        function, not a staged jax operation, even when the project is jax (`jax.experimental...`)."""
        self.names = names
        self.package = package
        self.env: dict[str, frozenset[str]] = {p: frozenset({p}) for p in params}
        self.local_names: set[str] = set(params)
        bindings: list[tuple[ast.AST, ast.AST]] = []
        for n in own:
            if isinstance(n, ast.Assign):
                bindings.extend((t, n.value) for t in n.targets)
            elif isinstance(n, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)) and n.value is not None:
                bindings.append((n.target, n.value))
            elif isinstance(n, (ast.For, ast.AsyncFor)):
                bindings.append((n.target, n.iter))
            elif isinstance(n, (ast.With, ast.AsyncWith)):
                bindings.extend((i.optional_vars, i.context_expr) for i in n.items if i.optional_vars is not None)
        bound = [(_target_names(target), value) for target, value in bindings]
        for targets, _ in bound:
            self.local_names.update(targets)
        for _ in range(4):  # to a fixpoint in practice (chains of locals are short)
            changed = False
            for targets, value in bound:
                found = self.of(value)
                if not found:
                    continue
                for name in targets:
                    old = self.env.get(name, frozenset())
                    if not found <= old:
                        self.env[name] = old | found
                        changed = True
            if not changed:
                break

    def of(self, e: ast.AST | None) -> frozenset[str]:  # noqa: C901
        if e is None:
            return frozenset()
        kind = type(e)
        if kind is ast.Name:
            return self.env.get(e.id, frozenset())
        if kind is ast.Constant or kind is ast.JoinedStr or kind is ast.Lambda:
            return frozenset()
        if kind is ast.Attribute:
            return frozenset() if is_static_attr(e.attr) else self.of(e.value)
        if kind is ast.Call:
            qual = _qualify(e.func, self.names, {})
            if returns_untraced(qual) or returns_untraced(dotted(e.func)):
                return frozenset()
            out = frozenset().union(*(self.of(a) for a in e.args), *(self.of(k.value) for k in e.keywords))
            if isinstance(e.func, ast.Attribute) and (qual is None or e.func.attr in ("item", "tolist")):
                out |= self.of(e.func.value)  # a method of a value: `x.sum()`
            if is_staged_call_name(qual) and not (self.package and qual.startswith(self.package)):
                out |= {STAGED}
            return out
        if kind is ast.Compare and all(isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)) for op in e.ops):
            # identity, and membership in a mapping or sequence (a display compares: traced.py's rule)
            displays = [c for op, c in zip(e.ops, e.comparators) if isinstance(op, (ast.In, ast.NotIn))
                        and isinstance(c, (ast.List, ast.Tuple, ast.Set))]
            if not displays:
                return frozenset()
            return frozenset().union(self.of(e.left), *(self.of(el) for d in displays for el in d.elts))
        if kind in (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp):
            parts = [g.iter for g in e.generators] + ([e.key, e.value] if kind is ast.DictComp else [e.elt])
            return frozenset().union(*(self.of(p) for p in parts))
        return frozenset().union(*(self.of(c) for c in ast.iter_child_nodes(e) if isinstance(c, ast.expr)))


def _target_names(target: ast.AST) -> list[str]:
    """Names an assignment target binds (`a`, `a, (b, *c)`); `x.a`, `x[i]` bind none."""
    kind = type(target)
    if kind is ast.Name:
        return [target.id]
    if kind is ast.Tuple or kind is ast.List:
        return [n for el in target.elts for n in _target_names(el)]
    if kind is ast.Starred:
        return _target_names(target.value)
    return []


def _find_entries(tree: ast.Module, module: str, names: dict[str, str], summary: CallSummary) -> None:
    """Functions a transform enters in this module: decorators, `jax.jit(f)` calls, lax bodies."""

    def qual(node) -> str | None:
        return _qualify(node, names, {})

    def enter(name: str, traced: set[str], how: str, line: int) -> None:
        old = summary.entries.get(name)
        if old is not None:
            traced |= old.traced
        summary.entries[name] = Entry(frozenset(traced), old.how if old else how, old.line if old else line)

    external = _external_prefixes(module)

    def enter_target(target: ast.AST, bound: tuple[int, frozenset[str]], statics: StaticSpec, how: str, line: int) -> None:
        info = _local_function(target, names, module, summary)
        if info is not None:
            untraced = set(info.positional[: bound[0]]) | bound[1] | statics.of(info) | info.literal_defaults
            enter(info.name, set(info.params) - untraced, how, line)
            return
        q = names.get(target.id) if isinstance(target, ast.Name) else None
        if q is not None and not q.startswith(module + ".") and not q.startswith(external):
            summary.foreign.setdefault(q, ForeignEntry(bound[0], bound[1], statics, how, line))

    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for k, deco in enumerate(node.decorator_list):
                found = _transform(deco, qual)
                below = node.decorator_list[k + 1 :]
                if found is not None and all(
                    _transform(d, qual) is not None or keeps_parameters(qual(d.func if isinstance(d, ast.Call) else d))
                    for d in below
                ):
                    tr, options = found
                    info = summary.functions[node.name]
                    untraced = _static_spec(options).of(info) | info.literal_defaults
                    enter(info.name, set(info.params) - untraced, _how(tr), node.lineno)
    last_names = _LAST_NAMES
    # a bare name qualifies to a transform or lax body only through a binding ending in its name
    entry_names = {name for name, target in names.items() if target.rpartition(".")[2] in last_names}
    # `x.jit(...)` or a bare name bound to one (no other kind of function qualifies to anything)
    for call in astscan.calls_named(tree, last_names, entry_names):
        q = qual(call.func)
        pos = [a for a in call.args if not isinstance(a, ast.Starred)]
        if q in TRACING and pos:
            target, peeled, bound = _unwrap(pos[0], qual)
            statics = _static_spec(call, vmap=q in VMAP_NAMES)
            if peeled:  # static_argnums count the positions of what jit is given, not the function's
                statics = StaticSpec(statics.names, (), statics.unknown)
            enter_target(target, bound, statics, _how(q), call.lineno)
        elif q in BODIES:
            for i in BODIES[q]:
                fns = (pos[1].elts if len(pos) > 1 and isinstance(pos[1], (ast.List, ast.Tuple)) else []) if i == -1 else pos[i : i + 1]
                for fn in fns:
                    target, _, bound = _unwrap(fn, qual)
                    enter_target(target, bound, StaticSpec(), f"a {q.rsplit('.', 1)[-1]} body", call.lineno)


def _how(transform: str) -> str:
    short = transform.rsplit(".", 1)[-1]
    return "vmapped" if "vmap" in short else f"{short}ted" if short.endswith("jit") else f"under {short}"


def _transform(expr: ast.AST, qual: Callable) -> tuple[str, ast.Call | None] | None:
    q = qual(expr)
    if q in TRACING:
        return q, None
    if isinstance(expr, ast.Call):
        fq = qual(expr.func)
        if fq in PARTIAL and expr.args and qual(expr.args[0]) in TRACING:
            return qual(expr.args[0]), expr
        if fq in TRACING and not expr.args:
            return fq, expr
    return None


def _unwrap(expr: ast.AST, qual: Callable) -> tuple[ast.AST, bool, tuple[int, frozenset[str]]]:
    """Through nested transforms and `functools.partial` to the function: (function, whether a
    transform or partial was peeled, (positions, names) the partials bind)."""
    peeled = False
    positional, keywords = 0, frozenset()
    while isinstance(expr, ast.Call) and expr.args and not isinstance(expr.args[0], ast.Starred):
        q = qual(expr.func)
        if q in PARTIAL:
            if any(isinstance(a, ast.Starred) for a in expr.args) or any(k.arg is None for k in expr.keywords):
                break  # what `*args` / `**kw` bind is unknown
            positional += len(expr.args) - 1
            keywords |= {k.arg for k in expr.keywords}
        elif q not in TRACING | WRAPPING:
            break
        expr, peeled = expr.args[0], True
    return expr, peeled, (positional, keywords)


def _local_function(expr: ast.AST, names: dict[str, str], module: str, summary: CallSummary) -> FunctionCalls | None:
    if isinstance(expr, ast.Name):
        q = names.get(expr.id)
        if q is not None and q.startswith(module + "."):
            return summary.functions.get(q[len(module) + 1 :])
    return None


def _static_spec(options: ast.Call | None, vmap: bool = False) -> StaticSpec:
    """The literal static arguments of a transform call (`transforms.STATIC_ARGNUMS_OPTIONS`,
    `STATIC_ARGNAMES_OPTIONS`) and, for a vmap (`vmap`: `options` is `jax.vmap(f, ...)` itself),
    the positions its `in_axes` maps with `None`: an unmapped argument is passed through as it
    is, so a Python value there stays Python (jaxoplanet's `vmap(surface_light_curve,
    in_axes=(None, ..., 0))(surface, ...)`)."""
    if options is None:
        return StaticSpec()
    names: set[str] = set()
    nums: list[int] = []
    for kw in options.keywords:
        if kw.arg not in STATIC_ARGNAMES_OPTIONS and kw.arg not in STATIC_ARGNUMS_OPTIONS:
            continue
        values = kw.value.elts if type(kw.value).__name__ in OPTION_DISPLAYS else [kw.value]
        if not all(isinstance(v, ast.Constant) for v in values):
            return StaticSpec(unknown=True)
        if kw.arg in STATIC_ARGNAMES_OPTIONS:
            names.update(v.value for v in values if isinstance(v.value, str))
        else:
            nums.extend(v.value for v in values if type(v.value) is int)
    if vmap:
        axes = next((kw.value for kw in options.keywords if kw.arg == "in_axes"), None)
        if axes is None and len(options.args) > 1 and not any(isinstance(a, ast.Starred) for a in options.args[:2]):
            axes = options.args[1]
        if isinstance(axes, (ast.Tuple, ast.List)):
            nums.extend(i for i, a in enumerate(axes.elts) if isinstance(a, ast.Constant) and a.value is None)
    return StaticSpec(frozenset(names), tuple(nums))
