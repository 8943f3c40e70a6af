"""Which functions of a module may run under a trace, and which of their values may be traced,
read from the stdlib AST: the screen the traced-code rules' `could_match` use before any libcst
parse.

It mirrors `jit_contexts` (entry points, propagation through calls) and `traced` (which
expressions hold traced values), and wherever it simplifies, it errs toward "traced", so it
is an over-approximation: a value the analysis calls traced, the screen calls traced too.
That is what makes rejecting a file on its answer sound (tests/test_screens.py checks it
against every fixture, the fuzz suite against generated programs, scripts/screen_soundness.py
against the jax/flax/optax corpus). The simplifications:

- names are qualified exactly as the rules do (`ImportMap.from_ast`): an entry point is a
  decorator or call that qualifies to a JAX transform, so `from jax._src.api import jit` (a
  relative or internal import) enters no trace, for the screen as for the analysis;
- a traced function's names are traced if any assignment anywhere in it makes them so (the
  analysis follows statement order and lets a reassignment drop a name);
- a called name is every def or alias it may name (the analysis requires one unambiguous
  candidate); a method call `x.m(...)` runs the one plain method `m` of the classes outside
  functions, or inside a method `self.m(...)` every method `m` of its class's name (the
  analysis: of its class, if the module has one class of that name); a name some nested def
  has is looked up from the innermost def around the call outwards, lambdas skipped
  (`JitContexts._lookup`), other names mean every def of the name outside functions; every
  parameter that may receive a traced argument is traced (a plain method's arguments bind
  after `self`, other defs of a class try both alignments);
  every parameter of an entry point is traced except those named by literal
  `static_argnums`/`static_argnames` of a decorator on it and `self` of plain classes and unpassed
  Python defaults (`defaults`) (the analysis also drops `in_axes=None` arguments);
- a function traced code of another module calls (`entries`, from the project's call graph:
  `screen_entries`) is entered with the parameters passed traced, literal defaults included,
  every def its name may mean (the analysis enters the one module-level def or method so named);
- properties and `__call__` reached through a traced value are those of every class that may be
  a pytree; the truth of a name is static only for `*args`/`**kwargs`, parameters annotated as
  sequences and those every call of the module passes a display (where the calls are surely
  known), each never rebound but to a sequence, and for objects (below);
- attributes static on any object are the properties of classes the module's own test makes
  pytrees that return Python values (read as the screen reads traced values) and the fields
  such classes mark static, `self.x` static in a method where every class of its name declares
  `x` Python data (the analysis: the last class of the name, and more ways to declare it).

Where it decides as the analysis does: a call of a function imported from a module the analysis
cannot see into (`static_helpers.ModuleCallOracle`: relative imports, unknown packages, and with
the run's project the checked packages themselves, `TraceScreen(tree, own_packages)`) is never
traced, whatever its arguments; a parameter annotated as admitting no array gets no traced value
from a call (`FuncInfo.python_params`); `f(*xs, y)` binds from its first `*` argument only when
that is traced (`_star_traced`); only module-level instances run their class's `__call__`; a
called value runs `__call__` only when rooted at a parameter; `for a, b in zip(xs, ys)` pairs
targets with iterables; the truth of a name or attribute chain the function reads a public
non-array attribute of is Python's (`FunctionFacts.holds_object`).

This module holds the screen's walk: collecting a module's defs and calls, the functions
(`ScreenFunction`, whose names and expressions `screen_function` reads), propagation through calls
to a fixpoint, and the memo the rules ask. The screen's other jobs are mixed into `TraceScreen`:
where traces are entered (`screen_entry_points`), which defs a name or call may run
(`screen_scopes`), which parameters and attributes hold Python values (`screen_statics`); the text
test before it is `transform_prefilter`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from jaxfix.analysis import astscan, filememo, screen_facts
from jaxfix.analysis.jit_contexts import PARTIAL_NAMES, cross_entries
from jaxfix.analysis.names import ImportMap
from jaxfix.analysis.screen_entry_points import ScreenEntryPoints
from jaxfix.analysis.screen_function import ScreenFunction
from jaxfix.analysis.screen_scopes import ScreenScopes
from jaxfix.analysis.screen_statics import ScreenStatics
from jaxfix.analysis.static_values import is_known_library
from jaxfix.analysis.transform_prefilter import MAY_NAME_A_TRANSFORM as MAY_NAME_A_TRANSFORM
from jaxfix.analysis.transforms import CONSTRUCTION_HOOKS, LINEN_APPLY

# functions traced code of other modules calls ("f", "Cls.m") and the parameters it passes traced
ScreenEntries = frozenset[tuple[str, frozenset[str]]]
NO_ENTRIES: ScreenEntries = frozenset()


class TraceScreen(ScreenEntryPoints, ScreenScopes, ScreenStatics):
    """The screen for one module: which functions may run under a trace. Functions are looked at
    lazily: one walk finds the defs, calls and assignments; only traced functions get their own
    body walked (most functions of a module never are)."""

    def __init__(
        self,
        tree: ast.Module,
        own_packages: frozenset[str] = frozenset(),
        like: "TraceScreen | None" = None,
        entries: ScreenEntries = NO_ENTRIES,
    ) -> None:
        """`own_packages`: the checked project's top-level packages (`jit_contexts.own_packages`),
        whose modules the analysis cannot see into even when one is a known array library.
        `like`: a screen of the same tree, whose collected facts (none depends on the project)
        are taken instead of walking the tree again. `entries`: the functions traced code of other
        modules calls, with the parameters it passes traced (`screen_entries`), entered as the
        analysis enters them (`JitContexts._enter_external`)."""
        self.entries = entries
        if like is not None and entries and not like.collected:
            like = None  # it stopped before its walk (its module names no entry): these entries need one
        self.collected = False  # whether `_collect` walked the tree (or `_adopt` took such a walk's facts)
        self.names = ImportMap.from_ast(tree) if like is None else like.names
        self.out_of_sight = out_of_sight(tree, own_packages)
        # what qualifying a name and reading a call's result depend on
        self.names_key = (frozenset(self.names.bindings.items()), self.out_of_sight)
        self.functions: dict[ast.AST, ScreenFunction] = {}  # made on demand by `info_of`
        self.defs_by_name: dict[str, list[ast.AST]] = {}  # every def, any scope, methods too
        self.method_defs: dict[str, list[ast.AST]] = {}
        self.class_of: dict[int, ast.ClassDef] = {}  # id of a def of a class body (under its `if`s too) -> the class
        self.calls: list[ast.Call] = []
        self.aliases: dict[str, list[ScreenFunction]] = {}
        self._aliases_of: dict[int, set[str]] | None = None  # `static_params`: id of a function -> its aliases
        self.assigned_to: dict[int, str] = {}  # id of a call or lambda -> the one name it is assigned to
        self.classes: list[ast.ClassDef] = []
        self.imports: list[ast.Import | ast.ImportFrom] = []
        self.calls_by_name: dict[str, list[ast.Call]] = {}  # `f(...)`, `x.f(...)` by `f`
        self._built_from: dict[str, set[str]] | None = None  # `built_from`, made when first asked
        self._static_params: dict[ScreenFunction, set[str]] = {}
        self._python: dict[ScreenFunction, set[str]] = {}  # `_python_params`
        self._callees: tuple[dict[int, list[ast.Call]], dict[str, list[ast.Call]], set[str]] | None = None
        self._tree = tree
        self._field_helpers: frozenset[str] | None = None
        self._def_parent: dict[int, ast.AST | None] | None = None  # `def_parent`, made when first asked
        self._top_classes: list[ast.ClassDef] = []
        self._plain_classes: set[int] | None = None  # `plain_method_classes`, made when first asked
        self._spans: tuple | None = None  # `_def_spans`, made when first asked
        self._nested: dict[int, dict[str, list[ast.AST]]] | None = None  # `_nested_defs`, likewise
        self._static_attrs: frozenset[str] | None = None  # `static_attrs`, made when first asked
        self._fields: dict[str | None, frozenset[str]] = {}  # `python_fields`
        self._by_name: dict[str, list[ast.ClassDef]] | None = None  # `_classes_named`
        self._sure_pytrees: set[str] | None = None  # `_surely_pytrees`
        self._jit_arguments: set[str] | None = None  # `passed_sequences`: names in jit calls' arguments
        self._lambda_params: set[str] | None = None  # `passed_sequences`: every lambda's parameters
        if like is None:
            if not entries and not self._names_an_entry(tree):
                return  # nothing of the module runs under a trace: nothing to collect (3 files in 4)
            self._collect(tree)
            self.collected = True
        else:
            self._adopt(like)
            self.collected = like.collected  # a screen that stopped before its walk gave no facts
        self._find_entries()
        self._propagate()

    def _adopt(self, other: "TraceScreen") -> None:
        """The facts `_collect` and the lazily made module facts found in `other`'s tree (this
        tree): what the defs, calls, classes and statements are, not what is traced."""
        for name in _COLLECTED:
            setattr(self, name, getattr(other, name))
        if other._def_parent is None:
            self._top_classes = []  # `_scan_statements` fills it here, not in `other`

    def release(self) -> None:
        """Drop everything the screen holds, once its file is done (`filememo.forget`): its
        functions point back at it, a cycle with the whole tree hanging from it, which the
        collector would otherwise have to find and walk."""
        vars(self).clear()

    def traced_functions(self) -> Iterator[ScreenFunction]:
        return (f for f in list(self.functions.values()) if f.in_trace)

    # -- collection ---------------------------------------------------------------------
    def _collect(self, tree: ast.Module) -> None:
        calls, assigned_to, class_of = self.calls, self.assigned_to, self.class_of
        for node in astscan.nodes(tree):  # a class comes before the defs of its body
            kind = type(node)
            if kind is ast.Call:
                calls.append(node)
                func = node.func
                name = func.id if type(func) is ast.Name else func.attr if type(func) is ast.Attribute else None
                if name is not None:
                    self.calls_by_name.setdefault(name, []).append(node)
            elif kind is ast.Assign:
                if len(node.targets) == 1 and type(node.targets[0]) is ast.Name:
                    assigned_to[id(node.value)] = node.targets[0].id
            elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                self.defs_by_name.setdefault(node.name, []).append(node)
                if id(node) in class_of:
                    self.method_defs.setdefault(node.name, []).append(node)
            elif kind is ast.Import or kind is ast.ImportFrom:
                self.imports.append(node)
            elif kind is ast.ClassDef:
                self.classes.append(node)
                # its defs, those under an `if`/`try`... of its body too (methods for the analysis)
                stack = list(node.body)
                while stack:
                    child = stack.pop()
                    if type(child) is ast.FunctionDef or type(child) is ast.AsyncFunctionDef:
                        class_of[id(child)] = node
                    elif type(child) is not ast.ClassDef:
                        for name in astscan.STATEMENT_BLOCKS:
                            inner = getattr(child, name, None)
                            if type(inner) is list:
                                stack.extend(inner)

    def info_of(self, node, parent: ScreenFunction | None = None) -> ScreenFunction:
        """The one `ScreenFunction` of a def or lambda node (made on first ask)."""
        info = self.functions.get(node)
        if info is not None:
            if info.parent is None and parent is not None:
                info.parent = parent
            return info
        a = node.args
        positional = [p.arg for p in (*a.posonlyargs, *a.args)]
        star = {p.arg for p in (a.vararg, a.kwarg) if p is not None}
        is_property = is_method = False
        if not isinstance(node, ast.Lambda):
            decos = {self.names.qualify_ast(d) for d in node.decorator_list}
            is_property = bool(decos & {"property", "functools.cached_property"})
            is_method = bool(positional) and not decos & {"staticmethod", "classmethod"}
        info = ScreenFunction(
            node=node,
            name=getattr(node, "name", "<lambda>"),
            parent=parent,
            class_name=self.class_of[id(node)].name if id(node) in self.class_of else None,
            params=positional + [p.arg for p in a.kwonlyargs] + sorted(star),
            positional=positional,
            star_params=star,
            is_property=is_property,
            is_method=is_method and id(node) in self.class_of,
            screen=self,
        )
        self.functions[node] = info
        return info

    # -- propagation ----------------------------------------------------------------------
    def _propagate(self) -> None:
        work = [f for f in self.functions.values() if f.in_trace]
        queued = set(work)
        budget = 20 * max(len(self.functions), 1)
        while work and budget > 0:
            budget -= 1
            info = work.pop()
            queued.discard(info)
            before = set(info.traced_names)
            info.settle()
            grew = info.traced_names != before
            woken: list[ScreenFunction] = []
            for child in info.children:
                if grew or not child.in_trace:
                    child.in_trace = True
                    woken.append(child)
            woken.extend(self._propagate_calls(info))
            for other in woken:
                if other not in queued:
                    queued.add(other)
                    work.append(other)
        if work:  # out of budget: everything may be traced
            done: set[int] = set()
            while pending := [f for f in list(self.functions.values()) if id(f) not in done]:
                for info in pending:  # settling may add functions: they are marked on the next pass
                    done.add(id(info))
                    info.in_trace = True
                    info.traced_params = set(info.params)
                    info.settle()

    def _propagate_calls(self, info: ScreenFunction) -> list[ScreenFunction]:
        woken: list[ScreenFunction] = []
        for node in info._facts().calls_and_loads:
            if isinstance(node, ast.Call):
                if type(node.func) is ast.Attribute:
                    callees = self._method_callees(node)
                else:
                    callees = self._resolve(node.func, allow_attr=True, call=node)
                receiver_traced = isinstance(node.func, ast.Attribute) and info.traced(node.func.value)
                if type(node.func) is ast.Name and screen_facts.rooted_at_param(node.func, info) and info.traced(node.func):
                    # calling a traced argument by its name (`model(x)`): the `__call__` of a class
                    # that may be a pytree (the analysis: of the one model class defining it, or
                    # the class its annotation names; `JitPropagation.call_target` guesses for a
                    # plain name only). A method of a traced value (`q.astype(...)` in jax's splash
                    # attention) ran every pytree class's `__call__` here (issue #33 item 7)
                    callees = [*callees, *self._pytree_methods("__call__")]
                    receiver_traced = True
                if type(node.func) is ast.Attribute and node.func.attr in LINEN_APPLY and node.args:
                    # `model.apply(variables, x)`: a linen module's `__call__` (the analysis'
                    # `_linen_applied`; here any `__call__` of a class that may be a pytree)
                    for callee in self._pytree_methods("__call__"):
                        if callee is not info and any(info.traced(a) for a in node.args):
                            if self._enter(callee, set(callee.positional[1:]) | set(callee.params) - set(callee.positional[:1])):
                                woken.append(callee)
                pos = screen_facts.positional(node)
                if pos and self.names.qualify_ast(node.func) in PARTIAL_NAMES:
                    # `partial(f, cfg=v)` built in traced code: a deferred call of `f` in this
                    # trace, which the analysis reads as the call `f(cfg=v)` (`JitPropagation.
                    # call_target`), binding what the partial passes; so does the screen, but for
                    # a method or a starred function (the analysis takes no such partial): every
                    # parameter. Entering every parameter of `_apply_mask_and_soft_cap` (jax's
                    # splash attention) and of `store`/`get` (Pallas' interpreter) admitted both
                    # files to the libcst analysis for nothing (issue #33 item 7).
                    deferred = ast.Call(func=pos[0], args=node.args[1:], keywords=node.keywords)
                    for callee in self._resolve(pos[0], allow_attr=False, call=node):
                        if callee is not info and any(info.traced(a) for a in (*pos[1:], *(k.value for k in node.keywords))):
                            if callee.is_method or type(node.args[0]) is ast.Starred:
                                passed = set(callee.params)
                            else:
                                passed = self._bound_traced(info, callee, deferred) - self._python_params(callee)
                            if passed and self._enter(callee, passed):
                                woken.append(callee)
                for callee in callees:
                    if callee is info:
                        continue
                    # a parameter annotated as admitting no array gets a Python value from a call
                    traced = self._bound_traced(info, callee, node) - self._python_params(callee)
                    if receiver_traced and callee.positional:
                        traced.add(callee.positional[0])
                    if traced and self._enter(callee, traced):
                        woken.append(callee)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                for prop in self._pytree_methods(node.attr):
                    if prop.is_property and prop.positional and info.traced(node.value):
                        if self._enter(prop, {prop.positional[0]}):
                            woken.append(prop)
        return woken

    def _bound_traced(self, caller: ScreenFunction, callee: ScreenFunction, call: ast.Call) -> set[str]:
        """Parameters of `callee` that may receive a traced argument of `call`. A plain method of
        a class outside functions gets its arguments after `self` unless called on its class
        (`Cls.m(obj, x)`), as `JitContexts.bind_args` binds them; other defs of a class (static
        and class methods, classes in functions, the hooks a construction runs) are matched both
        with and without `self`. With a `*` argument, the positional parameters from the first
        one on if it is traced, none otherwise (`JitContexts._star_traced`)."""
        out: set[str] = set()
        hook = callee.name in CONSTRUCTION_HOOKS[1:]
        method = callee.is_method and not hook and self.def_parent.get(id(callee.node), 0) is None
        starred = [i for i, a in enumerate(call.args) if type(a) is ast.Starred]
        if hook and (starred or any(k.arg is None for k in call.keywords)):
            if any(caller.traced(a) for a in [*call.args, *(k.value for k in call.keywords)]):
                out.update(callee.params)
            return out
        if starred:
            first = starred[0]
            if caller.traced(call.args[first]):
                out.update((callee.positional[1:] if method else callee.positional)[first:])
            return out
        if any(k.arg is None for k in call.keywords):
            return out  # `f(a, **kw)`: the analysis binds nothing
        if callee.class_name is None:
            shifts: tuple[int, ...] = (0,)
        elif method:
            func = call.func
            unbound = type(func) is ast.Attribute and type(func.value) is ast.Name and func.value.id == callee.class_name
            shifts = (0,) if unbound else (1,)
        else:
            shifts = (0, 1)
        for i, arg in enumerate(call.args):
            if caller.traced(arg):
                for shift in shifts:
                    if i + shift < len(callee.positional):
                        out.add(callee.positional[i + shift])
                    else:
                        out.update(callee.star_params)
        for kw in call.keywords:
            if caller.traced(kw.value):
                out.add(kw.arg if kw.arg in callee.params else next(iter(callee.star_params), kw.arg))
        return out & set(callee.params)


def out_of_sight(tree: ast.Module, own_packages: frozenset[str] = frozenset()) -> frozenset[str]:
    """Local names bound by module-level imports from modules outside the known libraries, or from
    the project's own packages: `static_helpers._imported_out_of_sight` on the stdlib AST (relative
    imports, `from mypkg.ops import f`, `import mypkg.ops as ops`; statements directly in the
    module body only, as there)."""
    out: set[str] = set()
    for st in tree.body:
        kind = type(st)
        if kind is ast.ImportFrom:
            if st.names[0].name == "*":
                continue
            if not st.level and _known(st.module or "", own_packages):
                continue
            out.update(alias.asname or alias.name for alias in st.names)
        elif kind is ast.Import:
            for alias in st.names:
                if not _known(alias.name, own_packages):
                    out.add(alias.asname or alias.name.split(".", 1)[0])
    return frozenset(out)


def _known(module: str, own_packages: frozenset[str]) -> bool:
    return is_known_library(module) and module.split(".", 1)[0] not in own_packages


def may_see_less(tree: ast.Module, own_packages: frozenset[str]) -> bool:
    """Does a module-level import of this module bind a name into one of `own_packages` (so that
    `TraceScreen(tree, own_packages)` may call traced less than `TraceScreen(tree)`)?"""
    if not own_packages:
        return False
    for st in tree.body:
        if type(st) is ast.ImportFrom and not st.level and (st.module or "").split(".", 1)[0] in own_packages:
            return True
        if type(st) is ast.Import and any(a.name.split(".", 1)[0] in own_packages for a in st.names):
            return True
    return False


def any_site(tree: ast.Module, may_flag, entries: ScreenEntries = NO_ENTRIES) -> bool:
    """Does `may_flag(function, node)` hold for some node of some traced function's own body
    (`entries`: as for `trace_screen`)?"""
    return any(may_flag(fn, node) for fn in trace_screen(tree, entries=entries).traced_functions() for node in fn.own)


# what `TraceScreen._adopt` takes from a screen of the same tree
_COLLECTED = (
    "defs_by_name", "method_defs", "class_of", "calls", "assigned_to", "classes", "imports", "calls_by_name",
    "_built_from", "_callees", "_def_parent", "_top_classes", "_plain_classes", "_spans", "_nested",
)

# (tree, {(own packages, entries): screen}): the rules of one file ask about the same tree in
# turn, in `could_match` without the project, in `could_match_in` with its packages or entries
_LAST: list = [None, {}]


@filememo.on_forget
def _forget_screens() -> None:
    for screen in _LAST[1].values():
        screen.release()
    _LAST[:] = [None, {}]


def trace_screen(
    tree: ast.Module, own_packages: frozenset[str] = frozenset(), entries: ScreenEntries = NO_ENTRIES
) -> TraceScreen:
    """The screen of `tree`; with the checked project's `own_packages` (`could_match_in`), calls of
    functions imported from them are out of sight as for the analysis; with `entries`
    (`screen_entries`), the functions traced code of other modules calls are entered too.

    The entries are a parameter, not something the screen looks up: a screen reads its tree and
    nothing else (no project, no I/O), so `could_match(tree)` stays a function of the text, and
    the rules that know the project (`could_match_in`, through `screen_entries(ctx)`) pass what
    it says. Hashable, they key the memo beside the packages."""
    if _LAST[0] is not tree:
        _LAST[:] = [tree, {}]
    screens = _LAST[1]
    key = (own_packages, entries)
    screen = screens.get(key)
    if screen is None:
        like = next(iter(screens.values()), None)
        screen = screens[key] = TraceScreen(tree, own_packages, like, entries)
    return screen


def screen_entries(ctx) -> ScreenEntries:
    """What the project's call graph says other modules' traced code makes traced in `ctx`'s
    file (`jit_contexts.cross_entries`), as the screen takes it: (function name, traced
    parameters) pairs; `NO_ENTRIES` without a project or when none enters the file. Asked once per
    file (`ctx.fact`)."""
    return ctx.fact(screen_entries, _screen_entries)


def admits_entered(ctx, could_match) -> bool:
    """The `could_match_in` of a rule that follows calls (`Rule.follows_calls`): True for a file
    no other module's traced code enters (its `could_match` admitted it already), else
    `could_match(ctx.tree, entries)` with what enters it (`screen_entries`): the engine asks only
    this screen of such a file, its text test and `could_match` seeing the file alone."""
    entries = screen_entries(ctx)
    return not entries or could_match(ctx.tree, entries)


def _screen_entries(ctx) -> ScreenEntries:
    entered = cross_entries(ctx)
    if not entered:
        return NO_ENTRIES
    return frozenset((name, frozenset(entry.traced)) for name, entry in entered.items())
