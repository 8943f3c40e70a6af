"""Which classes of a module are pytrees, however they were made one and however imported.

Detection runs on the stdlib `ast` (cheap, picklable summaries), so the same code
serves one file (`pytree_classes(ctx)`, memoised per file through `ctx.fact`) and a
whole checked tree (`jaxfix.engine.project.build_project_index`), where a base
class may live in another module.

A class is a pytree when it
- subclasses `flax.struct.PyTreeNode` or `equinox.Module`, directly or through any
  chain of bases in this module or (with a project index) in another module;
- is decorated with `@flax.struct.dataclass`, `@chex.dataclass`,
  `@jax.tree_util.register_pytree_node_class` or `@jax.tree_util.register_dataclass`
  (bare, called, or through `functools.partial(...)`);
- is passed to `register_pytree_node`, `register_pytree_with_keys`,
  `register_pytree_node_class` or `register_dataclass` in a module-level call.

Only the two base-class kinds are inherited: jax's registry is keyed by exact type,
so a subclass of a decorated class is not a pytree unless decorated itself.

The table of decorators, bases and registering functions below is the only one: the
traced-value analyses (`jit_contexts`, `trace_screen`) ask `is_pytree_like` and
`REGISTER_FUNCTIONS`, the pytree-cache rule `pytree_classes` and its screen `PytreeScreen`.

The stdlib-AST readers of a module's statements and imports live in `module_ast`, the static
fields of a class in `pytree_fields`; both are re-exported here.
"""

from __future__ import annotations

import ast
import builtins
import sys
from collections.abc import Container, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, TypeVar

from jaxfix.analysis import astscan
from jaxfix.analysis.async_returns import async_returners
from jaxfix.analysis.bound_jits import module_jit_factories, module_jitted_names
from jaxfix.analysis.host_callbacks import host_callers
from jaxfix.analysis.module_ast import (  # noqa: F401 (read through `pytrees` too)
    IMPORT_ERRORS,
    ast_statements,
    bindings_of,
    dotted,
    module_bindings,
    module_imports,
    module_statements,
    qualify,
)
from jaxfix.analysis.pytree_fields import (  # noqa: F401 (read through `pytrees` too)
    FLAX_MODULE_BASES,
    NNX_VARIABLE_TYPES,
    PYTHON_VALUE_CALLS,
    STATIC_ANNOTATIONS,
    STATIC_CLASS_DECORATORS,
    STATIC_FIELD_MARKS,
    STATIC_FIELD_TYPES,
    VARIABLE_VALUE_ATTRIBUTES,
    _without_none,
    array_field_names,
    ast_field_marks,
    callable_field_names,
    is_static_annotation,
    is_static_class,
    is_static_field_call,
    is_static_field_partial,
    marks_static,
    static_field_helpers,
    static_field_names,
    tree_flatten_aux,
)
from jaxfix.analysis.timers import timer_names

T = TypeVar("T")


class FileFacts(Protocol):
    """What a fact about one file needs from the rule context (`jaxfix.rulebase.RuleContext`),
    named here so the analysis layer does not import the layer above it."""

    tree: ast.Module
    path: str
    project: Any

    def fact(self, key: Any, factory: Callable[[Any], T]) -> T: ...

# Kinds. The pytree-cache rewrite chooses its copy per kind.
FLAX = "flax"  # flax.struct.PyTreeNode subclass or @flax.struct.dataclass: self.replace(...)
CHEX = "chex"  # @chex.dataclass: dataclasses.replace
EQUINOX = "equinox"  # equinox.Module subclass: eqx.tree_at
REGISTER_DATACLASS = "register-dataclass"  # jax.tree_util.register_dataclass: dataclasses.replace
NODE_CLASS = "pytree-node-class"  # register_pytree_node_class: tree_flatten/tree_unflatten methods
REGISTERED = "registered"  # register_pytree_node / register_pytree_with_keys with separate functions
# flax.nnx.Module / Pytree / Object subclass: a graph object whose `nnx.jit` rebuilds it inside the
# trace; its only cache fix is the plain property (docs/frameworks.md: a cache attribute filled
# eagerly becomes static metadata holding an array, and `nnx.jit` refuses it)
NNX = "nnx"

INHERITED_KINDS = frozenset({FLAX, EQUINOX, NNX})

# -- The one table of what makes a class a pytree ------------------------------------------------
# Qualified name -> kind. A kind of None marks a class whose instances cross `jit` with array
# leaves but that `class_kind` does not report (a linen/nnx module, a NamedTuple, a keyed node
# class, a mappable chex dataclass): the traced-value analyses (`is_pytree_like`) count it, the
# pytree-cache rule, which needs a kind to rewrite, does not.
PYTREE_BASES: dict[str, str | None] = {
    "flax.struct.PyTreeNode": FLAX,
    "equinox.Module": EQUINOX,
    "equinox._module.Module": EQUINOX,
    "flax.linen.Module": None,
    "flax.nnx.Module": NNX,
    "flax.nnx.Object": NNX,
    "flax.nnx.Pytree": NNX,
    "typing.NamedTuple": None,
    "NamedTuple": None,
}
PYTREE_DECORATORS: dict[str, str | None] = {
    "flax.struct.dataclass": FLAX,
    "chex.dataclass": CHEX,
    "chex.dataclasses.dataclass": CHEX,
    "jax.tree_util.register_pytree_node_class": NODE_CLASS,
    "jax.tree_util.register_dataclass": REGISTER_DATACLASS,
    "jax.tree_util.register_pytree_with_keys_class": None,
    "chex.mappable_dataclass": None,
}
# Functions that register the class passed to them first.
REGISTER_FUNCTIONS: dict[str, str] = {
    "jax.tree_util.register_pytree_node": REGISTERED,
    "jax.tree_util.register_pytree_with_keys": REGISTERED,
    "jax.tree_util.register_pytree_node_class": NODE_CLASS,
    "jax.tree_util.register_dataclass": REGISTER_DATACLASS,
}
# Methods that only a pytree node class defines (jax calls them to flatten it).
FLATTEN_METHODS = frozenset({"tree_flatten", "tree_flatten_with_keys"})

# The entries `class_kind` follows: those with a kind.
ROOT_BASES = {name: kind for name, kind in PYTREE_BASES.items() if kind is not None}
DECORATOR_KINDS = {name: kind for name, kind in PYTREE_DECORATORS.items() if kind is not None}
CALL_KINDS = REGISTER_FUNCTIONS
PARTIAL = {"functools.partial"}


def decorator_target(node: ast.AST, bindings: dict[str, str]) -> str | None:
    """What a decorator applies: `@d`, `@d(...)` and `@functools.partial(d, ...)` all give `d`."""
    if isinstance(node, ast.Call):
        name = qualify(node.func, bindings)
        if name in PARTIAL and node.args:
            return qualify(node.args[0], bindings)
        return name
    return qualify(node, bindings)


@dataclass(frozen=True)
class ClassSummary:
    name: str
    line: int  # line of the `class` keyword (ast's lineno)
    bases: tuple[str, ...]  # qualified where imported; bare local names otherwise
    kind: str | None  # made a pytree by its own decorator or a registration call
    via: str | None  # the qualified name that made it one
    static_fields: tuple[str, ...] = ()  # `static_field_names`: fields holding Python data
    # decorators and module-level calls on the class outside the table, as `bases` spells names:
    # each may be a project-local registration helper (`registrar`)
    helpers: tuple[str, ...] = ()
    # `__init_subclass__` passes `cls` to these (as `helpers`): subclasses may be registered
    subclass_hooks: tuple[str, ...] = ()
    array_fields: tuple[str, ...] = ()  # `array_field_names`: fields annotated with an array type
    callable_fields: tuple[str, ...] = ()  # `callable_field_names`: fields holding a plain function


@dataclass(frozen=True)
class ModuleSummary:
    """What another module needs to know about this one: its classes, its imports, and its
    functions that may register a class as a pytree (`helpers`: function -> the functions it
    calls with one of its parameters first, `param_calls`)."""

    name: str | None
    classes: dict[str, ClassSummary] = field(default_factory=dict)
    bindings: dict[str, str] = field(default_factory=dict)
    helpers: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # its functions that make a static field (`static_field_helpers`), for modules importing them
    field_helpers: frozenset[str] = frozenset()
    # its timer classes and context managers (`timers.timer_names`), for JAX501 in modules importing them
    timers: frozenset[str] = frozenset()
    # its top-level names bound to a jitted function (`bound_jits.module_jitted_names`): a call of
    # one imported elsewhere is compiled work dispatched asynchronously (JAX501)
    jitted: frozenset[str] = frozenset()
    # its top-level functions that return a jitted function (`bound_jits.module_jit_factories`):
    # `hf = make_solver(...)` imported elsewhere binds compiled work (JAX501)
    jit_factories: frozenset[str] = frozenset()
    # its top-level functions that call back to the host from compiled code (`host_callbacks.
    # host_callers`): a program that calls one returns when it is done (JAX501)
    host_callers: frozenset[str] = frozenset()
    # its top-level functions and methods (`Class.method`) that return compiled work in flight
    # (`async_returns.async_returners`): a clock read right after a call of one misses it (JAX501)
    async_returners: frozenset[str] = frozenset()


# Top-level packages whose registering functions are all in the table above: a decorator or call
# from one of them that the table does not list registers nothing (`PytreeScreen`).
TABLE_PACKAGES = frozenset({"jax", "flax", "equinox", "chex"})
# Heads of qualified names that no project module is taken to have: the standard library's
# modules and the builtins (`object.__new__(cls)`, `typing.Protocol`). A project index resolves a
# dotted name through the project's module of that name (`ProjectIndex.kind_of`/`registrar`), and
# a project that names a top-level module of its own `typing` or `object` shadows Python's.
NOT_PROJECT_HEADS = frozenset(sys.stdlib_module_names) | frozenset(dir(builtins))


def _first_name_calls(root: ast.AST) -> list[ast.Call]:
    found = astscan.calls(root) if type(root) is ast.Module else astscan.nodes(root)
    return [n for n in found if type(n) is ast.Call and n.args and type(n.args[0]) is ast.Name]


def param_calls(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, bindings: dict[str, str], found: list[ast.Call] | None = None
) -> tuple[str, ...]:
    """The functions `fn`, or a def nested in it, calls with one of those functions' parameters
    as first argument (qualified as `bases` are; `d(...)(cls)` names `d`): what a registration
    helper (`def register(cls): ...; jax.tree_util.register_pytree_node(cls, ...)`) calls.
    `found`, when given, receives every call in `fn` whose first argument is a name."""
    params: set[str] = set()
    own: list[ast.Call] = []
    for node in astscan.nodes(fn):
        kind = type(node)
        if kind is ast.Call:
            if node.args and type(node.args[0]) is ast.Name:
                own.append(node)
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
            a = node.args
            params.update(x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs))
    if found is not None:
        found.extend(own)
    out: list[str] = []
    for call in own:
        if call.args[0].id not in params:
            continue
        func = call.func.func if isinstance(call.func, ast.Call) else call.func
        name = qualify(func, bindings)
        if name is not None and name not in out:
            out.append(name)
    return tuple(out)


def summary_of(tree: ast.Module, module_name: str | None, is_package: bool) -> ModuleSummary:
    """`summarize(tree, module_name, is_package)`, made once per tree and naming: a check asks
    for it twice per module that a transform enters, once for its rules (`_module_summary`) and
    once for the project index's record (`project.module_facts`), after them on the same tree;
    the second was 1.4% of a check of the 50,000-line generated file. Kept on the tree itself
    (a per-file object that dies with the file's analysis), so nothing outlives the file; a
    summary is frozen, so sharing it changes nothing."""
    memo = tree.__dict__.setdefault("_jaxfix_summaries", {})
    key = (module_name, is_package)
    found = memo.get(key)
    if found is None:
        found = memo[key] = summarize(tree, module_name, is_package)
    return found


def summarize(tree: ast.Module, module_name: str | None = None, is_package: bool = False) -> ModuleSummary:
    stmts = module_statements(tree)
    bindings = bindings_of([n for n in stmts if isinstance(n, (ast.Import, ast.ImportFrom))], module_name, is_package)
    helpers: dict[str, tuple[str, ...]] = {}
    calls: list[ast.Call] = []
    for top in tree.body:
        if isinstance(top, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found = param_calls(top, bindings, calls)
            if found:
                helpers[top.name] = found
            else:
                helpers.pop(top.name, None)  # a later definition wins
        else:
            calls.extend(_first_name_calls(top))
    class_defs = [node for node in stmts if isinstance(node, ast.ClassDef)]
    registered: dict[str, tuple[str, str]] = {}
    called_with: dict[str, list[str]] = {}  # class name -> other functions called with it first
    for call in calls:
        name = qualify(call.func, bindings)
        if name in CALL_KINDS:
            registered.setdefault(call.args[0].id, (CALL_KINDS[name], name))
        elif name is not None:
            called_with.setdefault(call.args[0].id, []).append(name)
    classes: dict[str, ClassSummary] = {}
    qualify_here = lambda n: qualify(n, bindings)  # noqa: E731
    field_helpers = static_field_helpers(tree, qualify_here)
    for node in class_defs:
        # A later definition of the same name wins, as at run time.
        classes[node.name] = _summarize_class(node, bindings, registered, called_with, field_helpers)
    timers = timer_names(tree, qualify_here)
    jitted = module_jitted_names(tree, qualify_here)
    factories = module_jit_factories(tree, qualify_here)
    callers = host_callers(tree, qualify_here)
    returners = async_returners(tree, qualify_here, jitted, callers)
    return ModuleSummary(
        module_name, classes, bindings, helpers, field_helpers, timers, jitted, factories, callers, returners
    )


def _summarize_class(
    node: ast.ClassDef,
    bindings: dict[str, str],
    registered: dict[str, tuple[str, str]],
    called_with: dict[str, list[str]],
    field_helpers: Container[str] = (),
) -> ClassSummary:
    kind = via = None
    helpers: list[str] = []
    for dec in node.decorator_list:
        target = decorator_target(dec, bindings)
        if target in DECORATOR_KINDS:
            kind, via = DECORATOR_KINDS[target], target
            break
        if target is not None:
            helpers.append(target)
    if kind is None and node.name in registered:
        kind, via = registered[node.name]
    helpers.extend(called_with.get(node.name, ()))
    hooks: tuple[str, ...] = ()
    for stmt in node.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "__init_subclass__":
            hooks = param_calls(stmt, bindings)
    bases = tuple(b for b in (qualify(base, bindings) for base in node.bases) if b is not None)
    statics = static_field_names(node, bindings, field_helpers)
    arrays = array_field_names(node, bindings)
    functions = callable_field_names(node, bindings)
    return ClassSummary(node.name, node.lineno, bases, kind, via, statics, tuple(helpers), hooks, arrays, functions)


def registrar(
    module: ModuleSummary, name: str, project: Any = None, _seen: frozenset = frozenset()
) -> str | None:
    """The registering function of the table that `name` reaches, when `name` (as a module's
    summary spells it: bare for its own functions, qualified when imported) is a function that
    registers the class passed to it: it calls a registering function (`register_pytree_node`,
    `register_dataclass`, `flax.struct.dataclass`, ...) with its parameter, directly or through
    other such helpers of this module or, with a project index, of another module."""
    if name in CALL_KINDS or name in DECORATOR_KINDS:
        return name
    if "." in name:
        return project.registrar(name, _seen) if project is not None and hasattr(project, "registrar") else None
    key = (module.name, name)
    if key in _seen or name not in module.helpers:
        return None
    for callee in module.helpers[name]:
        found = registrar(module, callee, project, _seen | {key})
        if found is not None:
            return found
    return None


def class_kind(
    module: ModuleSummary, cls: ClassSummary, project: Any = None, _seen: frozenset = frozenset()
) -> tuple[str, str] | None:
    """(kind, via) for a class of `module`, following bases here and, with a project index, elsewhere.

    A class decorated with (or passed at module level to) a project-local registration helper
    (`registrar`) is a pytree of kind REGISTERED: how the helper flattens it is not known here."""
    if cls.kind is not None:
        return cls.kind, cls.via or ""
    for helper in cls.helpers:
        if registrar(module, helper, project, _seen) is not None:
            return REGISTERED, helper
    return inherited_kind(module, cls, project, _seen)


def inherited_kind(
    module: ModuleSummary, cls: ClassSummary, project: Any = None, _seen: frozenset = frozenset()
) -> tuple[str, str] | None:
    """(kind, via) when the class is a pytree through its bases alone (PyTreeNode / eqx.Module chains).

    A decorator or registration call on a base does not count: jax registers exact types.
    """
    key = (module.name, cls.name)
    if key in _seen:
        return None
    seen = _seen | {key}
    for base in cls.bases:
        found = base_kind(module, base, project, seen)
        if found is not None:
            return found
    return None


def registers_subclasses(module: ModuleSummary, cls: ClassSummary, project: Any = None, _seen: frozenset = frozenset()) -> bool:
    """The class's `__init_subclass__` passes each subclass to a registering function or helper."""
    return any(registrar(module, hook, project, _seen) is not None for hook in cls.subclass_hooks)


def base_kind(module: ModuleSummary, base: str, project: Any = None, _seen: frozenset = frozenset()):
    """(kind, via) that a class deriving from `base` inherits, or None."""
    if base in ROOT_BASES:
        return ROOT_BASES[base], base
    if "." not in base and base in module.classes:
        if registers_subclasses(module, module.classes[base], project, _seen):
            return REGISTERED, base
        found = inherited_kind(module, module.classes[base], project, _seen)
        return None if found is None else (found[0], base)
    if project is not None:
        found = project.kind_of(base, _seen, inherited_only=True)
        return None if found is None else (found[0], base)
    return None


@dataclass(frozen=True)
class PytreeInfo:
    """One pytree class of the file being checked."""

    name: str
    line: int
    kind: str
    via: str  # the decorator, registration function or base class that makes it a pytree


def pytree_classes(ctx: FileFacts) -> dict[tuple[str, int], PytreeInfo]:
    """(class name, line of `class`) -> PytreeInfo, for every pytree class of ctx's file (memoised)."""
    return ctx.fact(("jaxfix.analysis.pytrees", "classes"), _compute)


def has_pytree_class(ctx: FileFacts, names: Container[str]) -> bool:
    """Whether a class of ctx's file named in `names` is one `pytree_classes` reports, asking
    `class_kind` about those classes alone (a screen's question, asked before any rule makes the
    full fact: the other classes' bases may live in modules of the project that a lazy index
    would parse to answer). The module summary is shared with `pytree_classes`."""
    return any(True for _ in _pytree_infos(ctx, names))


def _compute(ctx: FileFacts) -> dict[tuple[str, int], PytreeInfo]:
    return {(info.name, info.line): info for info in _pytree_infos(ctx)}


def _pytree_infos(ctx: FileFacts, names: Container[str] | None = None) -> Iterator[PytreeInfo]:
    """The pytree classes of ctx's file in source order (those named in `names`, when given)."""
    summary = module_summary(ctx)
    project = ctx.project
    for node in module_statements(ctx.tree):
        if isinstance(node, ast.ClassDef) and (names is None or node.name in names):
            cls = summary.classes.get(node.name)
            if cls is None or cls.line != node.lineno:
                cls = _summarize_one(node, summary)
            found = class_kind(summary, cls, project)
            if found is not None:
                yield PytreeInfo(node.name, node.lineno, found[0], found[1])


def module_summary(ctx: FileFacts) -> ModuleSummary:
    """What this module tells others (`summarize`), computed once per file."""
    return ctx.fact(("jaxfix.analysis.pytrees", "summary"), _module_summary)


def _module_summary(ctx: FileFacts) -> ModuleSummary:
    """`summarize` of ctx's file, named as the project index names it."""
    project = ctx.project
    module_name, is_package = None, False
    if project is not None and hasattr(project, "module_for_path"):
        module_name, is_package = project.module_for_path(ctx.path)
    return summary_of(ctx.tree, module_name, is_package)


def _summarize_one(node: ast.ClassDef, summary: ModuleSummary) -> ClassSummary:
    """A class shadowed by a later one of the same name: summarise it on its own (its decorators,
    not the module's registration calls, which name the later class)."""
    return _summarize_class(node, summary.bindings, {}, {})


def is_pytree_like(decorators: Iterable[str | None], bases: Iterable[str | None], methods: Iterable[str]) -> bool:
    """The broad, local test of the traced-value analyses: a class whose instances may be traced
    `jit` arguments, by a decorator, a base or a flatten method of the table (qualified names;
    a base class of the same module is the caller's to follow). Wider than `class_kind`: it also
    counts the entries without a kind, and a flatten method without a registration."""
    return (
        any(name in PYTREE_DECORATORS for name in decorators)
        or any(name in PYTREE_BASES for name in bases)
        or any(name in FLATTEN_METHODS for name in methods)
    )


class PytreeScreen:
    """Whether a class may be a pytree by `class_kind`, whatever project index the rule gets: a
    `could_match` screen on the stdlib AST, which never rejects a class `class_kind` reports.

    A project changes two things, and the screen allows for both:
    - it gives the module a name, so relative imports bind names too (`from .struct import
      dataclass`): any name a relative import binds may qualify to anything (`uncertain`);
    - it resolves a dotted base (`pkg.mod.Base`) through another module of the project, which may
      derive from `flax.struct.PyTreeNode`: every dotted base may make the class a pytree, but
      one of the standard library or the builtins (`typing.Protocol`, `NOT_PROJECT_HEADS`).
    A bare base that names no class of this module never resolves (a project module always has a
    non-empty dotted name), and a bare base naming one is followed through that class's bases.
    """

    def __init__(
        self, tree: ast.Module, statements: Sequence[ast.stmt], bindings: dict[str, str], calls: list[ast.Call] | None = None
    ) -> None:
        """`statements`: `ast_statements(tree.body)`; `bindings`: `bindings_of(statements)`;
        `calls`: every call of the tree, when the caller has them (else found on first need)."""
        self.tree = tree
        self._calls = calls
        self.bindings = bindings
        # the last definition wins, as in `summarize`
        self.local = {node.name: node for node in statements if isinstance(node, ast.ClassDef)}
        self.uncertain = {
            alias.asname or alias.name
            for node in statements
            if isinstance(node, ast.ImportFrom) and node.level
            for alias in node.names
        }
        self.functions = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self._first_args: dict[str, list[ast.Call]] | None = None  # `registers`

    def _maybe(self, expr: ast.AST, table: Container[str]) -> bool:
        """`expr` qualifies to a name in `table`, or might with a project (a relatively imported head)."""
        text = dotted(expr)
        if text is None:
            return False
        if text.partition(".")[0] in self.uncertain:
            return True
        return qualify(expr, self.bindings) in table

    def _maybe_helper(self, expr: ast.AST) -> bool:
        """`expr` may name a registration helper (`registrar`): a function of this module, or one
        imported from outside the standard library and the packages of the table."""
        text = dotted(expr)
        if text is None:
            return False
        if text.partition(".")[0] in self.uncertain:
            return True
        name = qualify(expr, self.bindings) or text
        if "." not in name:
            return name in self.functions
        top = name.partition(".")[0]
        return top not in TABLE_PACKAGES and top not in NOT_PROJECT_HEADS

    def may_be_pytree(self, node: ast.ClassDef) -> bool:
        for dec in node.decorator_list:  # `decorator_target`: `@d`, `@d(...)`, `@partial(d, ...)`
            if isinstance(dec, ast.Call):
                if self._maybe(dec.func, DECORATOR_KINDS) or self._maybe_helper(dec.func):
                    return True
                if dec.args and (self._maybe(dec.args[0], DECORATOR_KINDS) or self._maybe_helper(dec.args[0])):
                    return True
            elif self._maybe(dec, DECORATOR_KINDS) or self._maybe_helper(dec):
                return True
        if self.registers(node.name):
            return True
        return self._inherits(node, frozenset())

    def registers(self, name: str) -> bool:
        """Whether `name` is passed first to a call that may be a registering one (`summarize`'s
        `registered`) or a registration helper (`ClassSummary.helpers`). The module's calls are
        grouped by the name passed first once; only the calls passing `name` are qualified."""
        if self._first_args is None:
            calls = self._calls if self._calls is not None else astscan.calls(self.tree)
            self._first_args = {}
            for call in calls:
                if type(call) is ast.Call and call.args and type(call.args[0]) is ast.Name:
                    self._first_args.setdefault(call.args[0].id, []).append(call)
        return any(
            self._maybe(call.func, CALL_KINDS) or self._maybe_helper(call.func) for call in self._first_args.get(name, ())
        )

    def _inherits(self, node: ast.ClassDef, seen: frozenset[str]) -> bool:
        """`inherited_kind` / `base_kind`, over-approximated for an unknown project."""
        for base in node.bases:
            text = dotted(base)
            if text is None:  # `Generic[T]`, `make_base()`: `summarize` drops such bases too
                continue
            if text.partition(".")[0] in self.uncertain:
                return True
            name = qualify(base, self.bindings)
            if name in ROOT_BASES or ("." in name and name.partition(".")[0] not in NOT_PROJECT_HEADS):
                return True
            if name in self.local and name not in seen:
                local = self.local[name]
                if any(isinstance(s, ast.FunctionDef) and s.name == "__init_subclass__" for s in local.body):
                    return True  # it may register its subclasses (`registers_subclasses`)
                if self._inherits(local, seen | {name}):
                    return True
        return False
