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
"""

from __future__ import annotations

import ast
import bisect
import re
from collections.abc import Iterator

from jaxfix.analysis import astscan, filememo, pytrees, screen_facts
from jaxfix.analysis.defaults import python_default_ast
from jaxfix.analysis.jit_contexts import (
    BODY_ARGS,
    JIT_NAMES,
    PARTIAL_NAMES,
    PASS_THROUGH,
    VMAP_NAMES,
    cross_entries,
)
from jaxfix.analysis.names import ImportMap
from jaxfix.analysis.screen_function import ScreenFunction, body_facts
from jaxfix.analysis.static_values import (
    is_known_library,
)
from jaxfix.analysis.stubs import is_stub_ast
from jaxfix.analysis.transforms import (
    CONSTRUCTION_HOOKS,
    LINEN_APPLY,
    OLD_STYLE_COND_BODIES,
    is_old_style_cond,
    lax_body_arity,
)

_TRANSFORMS = JIT_NAMES | VMAP_NAMES | PASS_THROUGH
# functions traced code of other modules calls ("f", "Cls.m") and the parameters it passes traced
ScreenEntries = frozenset[tuple[str, frozenset[str]]]
NO_ENTRIES: ScreenEntries = frozenset()
_ENTRY_NAMES = _TRANSFORMS | frozenset(BODY_ARGS)  # what a call enters a trace through
_ENTRY_LAST_NAMES = frozenset(name.rpartition(".")[2] for name in _ENTRY_NAMES)
_JIT_LAST_NAMES = frozenset(name.rpartition(".")[2] for name in JIT_NAMES)

# The text test before the screen (`Rule.prefilter_pattern`): every transform and lax body the
# analysis follows is named `jax.*`, `equinox.*`, `flax.*` or `jax_dataclasses.*`
# (`transforms.TRANSFORM_PACKAGES`), so a name qualifies to one only through an import of one of
# them (`import jax`, `import a, jax.numpy as jnp`, `from jax import jit`, `from flax.nnx import jit`,
# `from jax.lax import scan`, `from jax.experimental.pjit import pjit`, `from equinox import
# filter_jit`; `from jax._src.api import jit` qualifies to `jax._src.api.jit`, no transform), or
# spelled out with `jax`/`equinox` unbound by any import (bound by an assignment or a star import).
# Any text holding none of those spellings has no trace entry for the rules.
#
# Written as below it reads:
#     \bimport\b[^\n]*\b(?:jax|equinox|flax|jax_dataclasses)\b | \b(?:import|from)\s*\\
#     | \bfrom\s+(?:jax|equinox|flax|jax_dataclasses)(?:\s*\.\s*(?:lax|experimental(?:\s*\.\s*pjit)?|nnx|linen))?\s+import\b
#     | (?<![\w.])(?:jax|equinox)<TRANSFORM_ATTRIBUTE>
# Each branch starts with its word and checks what precedes it afterwards (a look-behind), so the
# regex engine skips ahead to the next i, f, j or e instead of trying every branch at every
# character: the same matches, 9x faster (tests/test_prefilter_pattern.py checks they agree).
_TRANSFORM_ATTRIBUTE = (
    r"(?:\s|#[^\n]*)*\.\s*(?:jit|pmap|vmap|grad|value_and_grad|jacfwd|jacrev|hessian|jvp|vjp"
    r"|linearize|checkpoint|remat|lax|experimental|filter_\w+)\b"
)
MAY_NAME_A_TRANSFORM = re.compile(
    r"import(?<=(?<!\w)import)\b[^\n]*\b(?:jax|equinox|flax|jax_dataclasses)\b"
    r"|import(?<=(?<!\w)import)\s*\\"
    r"|from(?<=(?<!\w)from)\s*\\"
    r"|from(?<=(?<!\w)from)\s+(?:jax|equinox|flax|jax_dataclasses)(?:\s*\.\s*(?:lax|experimental(?:\s*\.\s*pjit)?|nnx|linen))?\s+import\b"
    r"|jax(?<=(?<![\w.])jax)" + _TRANSFORM_ATTRIBUTE + r"|equinox(?<=(?<![\w.])equinox)" + _TRANSFORM_ATTRIBUTE
)

class TraceScreen:
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
        self._callees: tuple[dict[int, list[ast.Call]], list[ast.Call]] | None = None
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
                        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
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

    # -- entry points -------------------------------------------------------------------
    def _transform_of(self, expr: ast.AST) -> tuple[str, ast.Call | None] | None:
        qualify = self.names.qualify_ast
        qual = qualify(expr)
        if qual in _TRANSFORMS:
            return qual, None
        if isinstance(expr, ast.Call):
            fq = qualify(expr.func)
            pos = screen_facts.positional(expr)
            if fq in PARTIAL_NAMES and pos and qualify(pos[0]) in _TRANSFORMS:
                return qualify(pos[0]), expr
            if fq in _TRANSFORMS and not pos:
                return fq, expr
        return None

    def _resolve(self, expr: ast.AST, allow_attr: bool, call: ast.Call | None = None) -> list[ScreenFunction]:
        """Every function `expr` may name: a def by name, a jitted alias, a lambda, a method.
        `call`: the call `expr` is written in. A name some nested def has is looked up from the
        call's scope outwards as the analysis does (`JitContexts._lookup`): the nested defs of
        the innermost scope that has one, nothing when a parameter comes first, else the defs
        outside functions; without `call`, or for other names, every def of the name."""
        if isinstance(expr, ast.Lambda):
            return [self.info_of(expr)]
        if isinstance(expr, ast.Name):
            defs = self.defs_by_name.get(expr.id, ())
            if call is not None and any(self.def_parent.get(id(d)) is not None for d in defs):
                found = self._lexical_lookup(expr.id, call)
                if found is not None:
                    return [self.info_of(d) for d in found]
                defs = [d for d in defs if self.def_parent.get(id(d)) is None]
            # `Cls(x)` runs its `__init__` and the dataclass/equinox hooks; `h(x)` on an instance
            # built from a class of the module runs its `__call__`
            run = [*self._class_methods({expr.id}, CONSTRUCTION_HOOKS)]
            run += self._class_methods(self.built_from.get(expr.id, ()), ("__call__",))
            return [*map(self.info_of, defs), *self.aliases.get(expr.id, ()), *run]
        if allow_attr and isinstance(expr, ast.Attribute):
            head = expr.value
            while isinstance(head, ast.Attribute):
                head = head.value
            if isinstance(head, ast.Name) and head.id in self.names.bindings:
                return []  # `jnp.where(...)`: a module's function, not a method
            return [self.info_of(d) for d in self.method_defs.get(expr.attr, ())]
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
            return self._made_by(expr.func, call)
        return []

    def _made_by(self, factory: ast.Name, call: ast.Call | None) -> list[ScreenFunction]:
        """The nested defs a factory named `factory` may return by name (`jax.jit(make_step(lr))`
        compiles `make_step`'s `step`): the loose side of `JitContexts._made_by`."""
        made = []
        for info in self._resolve(factory, allow_attr=False, call=call):
            if type(info.node) is ast.Lambda:
                continue
            nested = self._nested_defs().get(id(info.node), {})
            for node in body_facts(info.node).own:
                if type(node) is ast.Return and type(node.value) is ast.Name:
                    made += [self.info_of(d) for d in nested.get(node.value.id, ())]
        return made

    def _lexical_lookup(self, name: str, call: ast.Call) -> list[ast.AST] | None:
        """The nested defs `name` means in `call`'s scope chain ([] when a parameter of a scope on
        the way shadows it), or None when no enclosing function has either (a module-level name).
        The chain is that of the innermost def around the call, its decorators included (the
        analysis' scope for them); a lambda on the way is not looked at, which only finds more
        defs than the analysis (whose lookup stops at a lambda's parameter)."""
        scope = self._enclosing_def(call)
        while scope is not None:
            found = self._nested_defs().get(id(scope), {}).get(name)
            if found:
                return found
            if name in screen_facts.param_names(scope):
                return []
            scope = self.def_parent.get(id(scope))
        return None

    def _enclosing_def(self, node: ast.AST) -> ast.AST | None:
        """The innermost def whose text (from its first decorator) holds `node`, by position: of
        the defs beginning at or before `node`, the last (by beginning) that ends after it. The
        last def beginning before `node` is found by bisection; when it ends first, the answer
        is on its chain of previous spans ending no earlier (the spans skipped end before it, so
        before `node`). A scan of every def per call was quadratic in a file of many defs."""
        begins, spans, outer = self._def_spans()
        at = (node.lineno, node.col_offset)
        i = bisect.bisect_right(begins, at) - 1
        while i >= 0 and not at < spans[i][1]:
            i = outer[i]
        return spans[i][2] if i >= 0 else None

    def _def_spans(self) -> tuple[list, list[tuple[tuple[int, int], tuple[int, int], ast.AST]], list[int]]:
        """The beginnings, the (beginning, end, def) of every def by beginning, and for each the
        index of the last one before it ending no earlier (-1: none), made when a nested def's
        name is first called."""
        if self._spans is None:
            spans = []
            for defs in self.defs_by_name.values():
                for d in defs:
                    first = d.decorator_list[0] if d.decorator_list else d
                    spans.append(((first.lineno, first.col_offset), (d.end_lineno, d.end_col_offset), d))
            spans.sort(key=lambda span: span[0])
            outer, stack = [], []
            for k, (_, end, _) in enumerate(spans):
                while stack and spans[stack[-1]][1] < end:
                    stack.pop()
                outer.append(stack[-1] if stack else -1)
                stack.append(k)
            self._spans = ([span[0] for span in spans], spans, outer)
        return self._spans

    def _nested_defs(self) -> dict[int, dict[str, list[ast.AST]]]:
        """id of a def -> name -> the defs directly nested in it (its body, classes in it included)."""
        if self._nested is None:
            nested: dict[int, dict[str, list[ast.AST]]] = {}
            for name, defs in self.defs_by_name.items():
                for d in defs:
                    parent = self.def_parent.get(id(d))
                    if parent is not None:
                        nested.setdefault(id(parent), {}).setdefault(name, []).append(d)
            self._nested = nested
        return self._nested

    @property
    def built_from(self) -> dict[str, set[str]]:
        """`h = Cls(...)` outside functions and classes: h -> {"Cls"}, whose `__call__` a call of
        `h` runs (the analysis' `instances`: an instance a function builds is not followed)."""
        if self._built_from is None:
            found: dict[str, set[str]] = {}
            stack = list(self._tree.body)
            while stack:
                st = stack.pop()
                kind = type(st)
                if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.ClassDef:
                    continue
                if kind is ast.Assign and len(st.targets) == 1 and type(st.targets[0]) is ast.Name:
                    value = st.value
                    if type(value) is ast.Call and type(value.func) is ast.Name:
                        found.setdefault(st.targets[0].id, set()).add(value.func.id)
                for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                    inner = getattr(st, name, None)
                    if type(inner) is list:
                        stack.extend(inner)
            self._built_from = found
        return self._built_from

    def _class_methods(self, classes, methods: tuple[str, ...]) -> list[ScreenFunction]:
        return [
            self.info_of(d)
            for m in methods
            for d in self.method_defs.get(m, ())
            if self.class_of[id(d)].name in classes
        ]

    def _unwrap(self, expr: ast.AST) -> tuple[ast.AST, bool]:
        """Through `partial(...)` and nested transforms to the function; True if anything was peeled."""
        peeled = False
        while isinstance(expr, ast.Call):
            q = self.names.qualify_ast(expr.func)
            pos = screen_facts.positional(expr)
            if not pos or not (q in PARTIAL_NAMES or q in _TRANSFORMS):
                break
            expr, peeled = pos[0], True
        return expr, peeled

    # -- what the analysis keeps static on entry ------------------------------------------
    @property
    def def_parent(self) -> dict[int, ast.AST | None]:
        """id of a def in statement position -> its enclosing def (None outside functions)."""
        if self._def_parent is None:
            self._scan_statements(self._tree)
        return self._def_parent

    @property
    def top_classes(self) -> list[ast.ClassDef]:
        """The classes outside any function."""
        if self._def_parent is None:
            self._scan_statements(self._tree)
        return self._top_classes

    @property
    def plain_method_classes(self) -> set[int]:
        """`_plain_method_classes`, made when a traced method first asks (most modules have none)."""
        if self._plain_classes is None:
            self._plain_classes = self._plain_method_classes(self._tree)
        return self._plain_classes

    def _scan_statements(self, tree: ast.Module) -> None:
        """The enclosing def of every def in statement position (None outside functions), and the
        classes outside any function, from the statements alone."""
        def_parent: dict[int, ast.AST | None] = {}
        stack: list[tuple[ast.AST, ast.AST | None]] = [(st, None) for st in tree.body]
        while stack:
            st, enclosing = stack.pop()
            kind = type(st)
            if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef:
                def_parent[id(st)] = enclosing
                stack.extend((inner, st) for inner in st.body)
                continue
            if kind is ast.ClassDef and enclosing is None:
                self._top_classes.append(st)
            for name in ("body", "orelse", "finalbody", "handlers", "cases"):
                inner = getattr(st, name, None)
                if type(inner) is list:
                    stack.extend((x, enclosing) for x in inner)
        self._def_parent = def_parent

    def enclosing(self, info: ScreenFunction) -> "ScreenFunction | None | bool":
        """The def `info` is nested in, None at module or class level, True when unknown (a lambda)."""
        if isinstance(info.node, ast.Lambda) or id(info.node) not in self.def_parent:
            return True
        parent = self.def_parent[id(info.node)]
        return None if parent is None else self.info_of(parent)

    def _plain_method_classes(self, tree: ast.Module) -> set[int]:
        """ids of classes outside any function that cannot be pytrees by the analysis' local test
        (no pytree decorator, base, `tree_flatten`, or registration): `self` of their methods is a
        Python object, never traced. Classes inside functions are left out (their defs are not
        methods for the analysis)."""
        qualify = self.names.qualify_ast
        registered = {
            call.args[0].id
            for call in self.calls
            if call.args
            and type(call.args[0]) is ast.Name
            and qualify(call.func) in pytrees.REGISTER_FUNCTIONS
        }
        maybe: set[str] = set(registered)
        changed = True
        while changed:
            changed = False
            for cls in self.classes:
                if cls.name in maybe:
                    continue
                if pytrees.is_pytree_like(
                    (qualify(d.func if isinstance(d, ast.Call) else d) for d in cls.decorator_list),
                    (qualify(b) for b in cls.bases),
                    (st.name for st in cls.body if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef))),
                ) or any(type(b) is ast.Name and b.id in maybe for b in cls.bases):
                    maybe.add(cls.name)
                    changed = True
        plain = [cls for cls in self.top_classes if cls.name not in maybe]
        if plain:
            # with a project, `pytrees.pytree_classes` also knows bases and registration helpers of
            # other modules (and this module's helpers): whatever it may find is not plain
            statements = [*self.imports, *self.classes]  # what `PytreeScreen` reads of the statements
            project = pytrees.PytreeScreen(tree, statements, pytrees.bindings_of(self.imports), self.calls)
            plain = [cls for cls in plain if not project.may_be_pytree(cls)]
        return {id(cls) for cls in plain}

    def static_params(self, info: ScreenFunction) -> set[str]:
        """Parameters the analysis drops from a traced entry: `self` of a plain class's method, and
        parameters with a Python default (`defaults.python_default_ast`) that no call in the module may pass."""
        found = self._static_params.get(info)
        if found is not None:
            return found
        out: set[str] = set()
        owner = self.class_of.get(id(info.node))
        if info.is_method and owner is not None and id(owner) in self.plain_method_classes:
            out.add(info.positional[0])
        a = info.node.args
        defaults = dict(zip([p.arg for p in (*a.posonlyargs, *a.args)][len(info.positional) - len(a.defaults) :], a.defaults))
        defaults.update((p.arg, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None)
        names = {info.name} | self._alias_names(info)
        if id(info.node) in self.assigned_to:
            names.add(self.assigned_to[id(info.node)])
        calls = [c for n in names for c in self.calls_by_name.get(n, ())]
        by_callee, of_calls = self._calls_by_callee()
        calls += by_callee.get(id(info.node), [])
        # `jax.jit(jax.jacrev(f))(r, 0)` passes arguments to `f` too
        calls += [c for c in of_calls if screen_facts.names_function(self._unwrap(c.func)[0], names)]
        if info.name in CONSTRUCTION_HOOKS:
            return self._static_params.setdefault(info, out)  # called by the class's name: nothing claimed
        for param, default in defaults.items():
            if not python_default_ast(default, info.parent is not None) or param in info.external_traced:
                continue  # (a call in another module passes it traced: `_enter_external`)
            index = info.positional.index(param) if param in info.positional else None
            if not any(screen_facts.may_pass(call, param, index) for call in calls):
                out.add(param)
        self._static_params[info] = out
        return out

    # -- attributes and parameters that hold Python values (as the analysis decides) ------------
    def static_attrs(self) -> frozenset[str]:
        """Attribute names static on any object (`JitContexts._static_properties`): properties of
        the module's pytree classes every return of which is a Python value with the instance
        traced (`n_sparse` returning `self.indices.shape[-1]`; `nse = property(lambda self:
        self.indices.shape[-2])`), and the fields such classes mark static, less every name some
        class of the module declares as an array field. Decided from what the analysis surely
        sees: classes the module's own test makes pytrees (the project may know more, which only
        adds properties the analysis also requires to be static), fields static by annotation or
        marker (a subset of the analysis' `static_fields`, so more array fields), each property
        body read with the screen's over-approximation (`settle`, order ignored)."""
        if self._static_attrs is None:
            self._static_attrs = frozenset()  # the analysis reads the bodies without module attributes
            self._static_attrs = self._static_properties()
        return self._static_attrs

    def field_helpers(self) -> frozenset[str]:
        """The module's functions that make a static field (`pytrees.static_field_helpers`)."""
        if self._field_helpers is None:
            self._field_helpers = pytrees.static_field_helpers(self._tree, self.names.qualify_ast)
        return self._field_helpers

    def _static_properties(self) -> frozenset[str]:
        out: set[str] = set()
        array_fields: set[str] = set()
        sure = self._surely_pytrees()
        qualify = self.names.qualify_ast
        for cls in self.classes:
            static = self.python_fields(cls.name)
            for st in cls.body:
                kind = type(st)
                if kind is ast.AnnAssign and type(st.target) is ast.Name:
                    if st.target.id not in static:
                        array_fields.add(st.target.id)
                    elif pytrees.is_static_field_call(st.value, qualify, self.field_helpers()):  # a mark only a pytree reads
                        out.add(st.target.id)
                elif kind is ast.Assign and cls.name in sure:
                    value = st.value
                    if not (type(value) is ast.Call and value.args and qualify(value.func) == "property"):
                        continue
                    getter = value.args[0]
                    if type(getter) is ast.Lambda and getter.args.args:
                        fn = self.info_of(getter)
                        if not fn._expr(getter.body, {getter.args.args[0].arg}):
                            out.update(t.id for t in st.targets if type(t) is ast.Name)
        for name, defs in self.method_defs.items():
            if name in out or name in array_fields:
                continue
            infos = [self.info_of(d) for d in defs]
            concrete = [i for i in infos if not is_stub_ast(i.node)]  # `stubs`: the overrides decide
            if (
                concrete
                and all(i.is_property and i.class_name in sure for i in infos)
                and all(map(screen_facts.returns_python, concrete))
            ):
                out.add(name)
        for cls in self.classes:
            out.update(pytrees.tree_flatten_aux(cls))  # aux data (`JitContexts._static_properties`)
        return frozenset(out - array_fields)

    def _surely_pytrees(self) -> set[str]:
        """Names of classes the analysis' own test makes pytrees (`JitContexts._is_pytree_class`,
        in source order, a base among the classes before it): always among its `pytree_classes`."""
        if self._sure_pytrees is None:
            qualify = self.names.qualify_ast
            sure: set[str] = set()
            for cls in sorted(self.classes, key=lambda c: (c.lineno, c.col_offset)):
                if pytrees.is_pytree_like(
                    (qualify(d.func if type(d) is ast.Call else d) for d in cls.decorator_list),
                    (qualify(b) for b in cls.bases),
                    (st.name for st in cls.body if type(st) is ast.FunctionDef or type(st) is ast.AsyncFunctionDef),
                ) or any(type(b) is ast.Name and b.id in sure for b in cls.bases):
                    sure.add(cls.name)
            self._sure_pytrees = sure
        return self._sure_pytrees

    def python_fields(self, class_name: str | None) -> frozenset[str]:
        """Fields every class named `class_name` declares as Python data, a subset of the analysis'
        `static_fields` of that name (`JitContexts._class_static_fields`, which keeps the last class
        of a name): a non-array annotation (`depth: int`), a static marker (`eqx.field(static=True)`),
        or `self.num_stages = num_stages` from an `__init__` parameter annotated as admitting no
        array and no other assignment of the attribute in the class (`screen_facts.init_python_fields`)."""
        found = self._fields.get(class_name)
        if found is None:
            found = frozenset()
            classes = self._classes_named().get(class_name)
            if classes:
                found = frozenset.intersection(*(self._class_python_fields(cls) for cls in classes))
            self._fields[class_name] = found
        return found

    def _classes_named(self) -> dict[str, list[ast.ClassDef]]:
        """`self.classes` by name, made when first asked: a search of every class per name asked
        was quadratic in a file of many classes."""
        if self._by_name is None:
            self._by_name = {}
            for cls in self.classes:
                self._by_name.setdefault(cls.name, []).append(cls)
        return self._by_name

    def _class_python_fields(self, cls: ast.ClassDef) -> frozenset[str]:
        qualify = self.names.qualify_ast
        out: set[str] = set()
        for st in cls.body:
            if type(st) is not ast.AnnAssign or type(st.target) is not ast.Name:
                continue
            ann = pytrees._without_none(st.annotation)
            if type(ann) is ast.Subscript:
                ann = ann.value
            qual = qualify(ann)
            python = (qual or "").rsplit(".", 1)[-1] in pytrees.STATIC_FIELD_TYPES or pytrees.is_static_annotation(qual)
            if python or pytrees.is_static_field_call(st.value, qualify, self.field_helpers()):
                out.add(st.target.id)
        return frozenset(out | screen_facts.init_python_fields(cls, qualify))

    def passed_sequences(self, info: ScreenFunction) -> set[str]:
        """Parameters every call of `info` in the module passes a tuple/list display or a list
        comprehension (or leaves to a default that is one or None): Python sequences, whose truth
        is static (`JitContexts._sequence_params`). Decided only where the calls the analysis
        resolves to `info` are surely known: an undecorated def outside functions and classes,
        the one def of its name, never named by an assignment (`f_jit = jax.jit(...)` makes an
        alias) nor in a jit call's arguments (a jitted def has none), nor inside a called
        expression (`jax.vmap(f)(xs)` is a call of `f` too); every call by its name then
        resolves to it unless a parameter of a scope around shadows the name, and at least one
        call outside any such scope must exist."""
        node = info.node
        if type(node) is ast.Lambda or node.decorator_list or id(node) in self.class_of:
            return set()
        name = node.name
        if self.defs_by_name.get(name) != [node] or self.def_parent.get(id(node), 0) is not None:
            return set()
        if name in self._jit_argument_names() or name in self.assigned_to.values():
            return set()
        _, of_calls = self._calls_by_callee()
        if any(type(n) is ast.Name and n.id == name for c in of_calls for n in ast.walk(c.func)):
            return set()
        calls = [c for c in self.calls_by_name.get(name, ()) if type(c.func) is ast.Name]
        if name in self._lambda_parameter_names():
            return set()  # `lambda f: f(x)`: whether a call means the def depends on the lambda around
        if not any(self._lexical_lookup(name, c) is None for c in calls):
            return set()  # no call surely resolves to the def: the analysis has no sites, no sequences
        a = node.args
        positional = info.positional
        defaults: dict[str, ast.AST] = dict(zip(positional[len(positional) - len(a.defaults) :], a.defaults))
        defaults.update((p.arg, d) for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None)
        bound_calls: list[dict[str, ast.AST]] = []
        for c in calls:
            if len(c.args) > len(positional) or any(type(x) is ast.Starred for x in c.args):
                return set()
            if any(k.arg is None for k in c.keywords):
                return set()
            bound = dict(zip(positional, c.args))
            bound.update((k.arg, k.value) for k in c.keywords)
            bound_calls.append(bound)
        out: set[str] = set()
        for p in info.params:
            default = defaults.get(p)
            if default is not None and not (
                type(default) is ast.Tuple or type(default) is ast.List
                or (type(default) is ast.Constant and default.value is None)
            ):
                continue
            if all(
                (type(arg) is ast.Tuple or type(arg) is ast.List or type(arg) is ast.ListComp)
                if (arg := bound.get(p)) is not None
                else default is not None
                for bound in bound_calls
            ):
                out.add(p)
        return out

    def _jit_argument_names(self) -> set[str]:
        """Every name read in the arguments of a call of a jit transform (`jax.jit(partial(f, ...))`):
        the defs the analysis may give a jit site."""
        if self._jit_arguments is None:
            found: set[str] = set()
            qualify = self.names.qualify_ast
            for call in self.calls:
                func = call.func
                last = func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else None
                if last is None or last not in _JIT_LAST_NAMES and last not in self.names.bindings:
                    continue
                if qualify(func) in JIT_NAMES:
                    for arg in [*call.args, *(k.value for k in call.keywords)]:
                        found.update(n.id for n in ast.walk(arg) if type(n) is ast.Name)
            self._jit_arguments = found
        return self._jit_arguments

    def _lambda_parameter_names(self) -> set[str]:
        if self._lambda_params is None:
            self._lambda_params = {
                p for n in astscan.nodes(self._tree) if type(n) is ast.Lambda for p in screen_facts.param_names(n)
            }
        return self._lambda_params

    def _calls_by_callee(self) -> tuple[dict[int, list[ast.Call]], list[ast.Call]]:
        """(id of a called expression -> the calls of it, the calls of a call's result), made once:
        `static_params` asks per traced function, and scanning every call each time is quadratic
        in a module of many jitted functions."""
        if self._callees is None:
            by_callee: dict[int, list[ast.Call]] = {}
            for call in self.calls:
                by_callee.setdefault(id(call.func), []).append(call)
            self._callees = (by_callee, [c for c in self.calls if type(c.func) is ast.Call])
        return self._callees

    def _alias_names(self, info: ScreenFunction) -> set[str]:
        """The names `aliases` gives `info` (`f_jit = jax.jit(f)`), from an index made once: a scan
        of every alias per traced function was quadratic in a module of many jitted functions."""
        if self._aliases_of is None:
            self._aliases_of = {}
            for alias, targets in self.aliases.items():
                for target in targets:
                    self._aliases_of.setdefault(id(target), set()).add(alias)
        return self._aliases_of.get(id(info), set())

    def _enter(self, info: ScreenFunction, traced: set[str]) -> bool:
        grew = not info.in_trace or not traced <= info.traced_params
        info.in_trace = True
        info.traced_params |= traced
        return grew

    def _names_an_entry(self, tree: ast.Module) -> bool:
        """Could `_find_entries` enter a function: a decorator or a call it would take for a
        transform or a lax body? Asked of the module's calls and statements (`astscan.calls`,
        `pytrees.module_statements`: listed once per file, for the call graph too) before the
        walk of every node `_collect` makes, which a module with no entry never needs."""
        for node in pytrees.module_statements(tree):
            is_def = type(node) is ast.FunctionDef or type(node) is ast.AsyncFunctionDef
            if is_def and any(self._transform_of(deco) is not None for deco in node.decorator_list):
                return True
        return any(
            (qual in _TRANSFORMS and screen_facts.positional(call)) or qual in BODY_ARGS
            for call, qual, _ in self._transform_calls(astscan.calls(tree))
        )

    def _transform_calls(self, calls: list[ast.Call]) -> Iterator[tuple[ast.Call, str | None, tuple | None]]:
        """(call, the name its function qualifies to, `_transform_of` a called call) of each of
        `calls` that may name a transform or a lax body: its function's last name is one's, or a
        name an import binds to one (`from jax import jit as J`). Most calls are not qualified."""
        qualify = self.names.qualify_ast
        aliases = {local for local, target in self.names.bindings.items() if target in _ENTRY_NAMES}
        for call in calls:
            func = call.func
            kind = type(func)
            if kind is ast.Attribute:
                if func.attr not in _ENTRY_LAST_NAMES:
                    continue
            elif kind is ast.Name:
                if func.id not in _ENTRY_LAST_NAMES and func.id not in aliases:
                    continue
            elif kind is not ast.Call:
                continue  # no dotted name: qualifies to nothing
            found = self._transform_of(func) if kind is ast.Call else None
            yield call, (qualify(func) if found is None else found[0]), found

    def _find_entries(self) -> None:
        for defs in self.defs_by_name.values():
            for node in defs:
                found = [f for deco in node.decorator_list if (f := self._transform_of(deco)) is not None]
                # As `JitContexts._find_entries`: a jit or vmap decorator enters its function; a
                # pass-through one (grad, checkpoint, custom_vjp) does not (its body is traced
                # where it is called under a trace, which propagation follows). The static
                # arguments of a jit among the decorators are Python values under every one
                # (`JitContexts._entry` takes them out of the whole entry). Pallas kernels stack
                # `custom_vjp` on `partial(jax.jit, static_argnames=...)`: entering every parameter
                # there admitted six jax files to the libcst analysis for nothing (issue #33).
                if any(qual in JIT_NAMES or qual in VMAP_NAMES for qual, _ in found):
                    info = self.info_of(node)
                    statics = set().union(*(screen_facts.statics(call, info) for qual, call in found if qual in JIT_NAMES))
                    self._enter(info, set(info.params) - statics)
        for call, qual, found in self._transform_calls(self.calls):
            pos = screen_facts.positional(call)
            if (qual in _TRANSFORMS) and pos:
                options = call if found is None else found[1]
                target, peeled = self._unwrap(pos[0])
                for info in self._resolve(target, allow_attr=True, call=call):
                    offset = 1 if info.is_method and isinstance(target, ast.Attribute) else 0  # `jax.jit(self.f, ...)`
                    statics = screen_facts.statics(options, info, offset) if qual in JIT_NAMES and not peeled else set()
                    self._enter(info, set(info.params) - statics)
                alias = self.assigned_to.get(id(call))
                if alias is not None:
                    self.aliases.setdefault(alias, []).extend(self._resolve(target, allow_attr=False, call=call))
                    self._aliases_of = None
            if qual in BODY_ARGS:
                plain = not call.keywords and not any(type(a) is ast.Starred for a in call.args)
                second = pos[1] if len(pos) > 1 else None
                old_cond = is_old_style_cond(
                    qual, len(pos), isinstance(second, (ast.Tuple, ast.List, ast.Constant)), plain
                )
                for fn_expr in screen_facts.body_args(call, OLD_STYLE_COND_BODIES if old_cond else BODY_ARGS[qual]):
                    if isinstance(fn_expr, ast.Name) and not self._resolve(fn_expr, allow_attr=False, call=call):
                        # a name bound to `partial(body, ...)` (`JitContexts._partial_body`): any
                        # partial call assigned to that name, wherever (the screen admits more)
                        bound = [
                            c for c in self.calls
                            if self.assigned_to.get(id(c)) == fn_expr.id and self.names.qualify_ast(c.func) in PARTIAL_NAMES
                        ]
                        for c in bound:
                            for info in self._resolve(self._unwrap(c)[0], allow_attr=False, call=c):
                                self._enter(info, set(info.params))
                                info.external_traced |= set(info.positional)
                    target, _ = self._unwrap(fn_expr)
                    arity = 1 if old_cond else lax_body_arity(qual, len(call.args), plain)
                    for info in self._resolve(target, allow_attr=True, call=call):
                        self._enter(info, set(info.params))
                        # operands reach defaulted parameters (`JitContexts`: the analysis enters so too)
                        passed = info.positional if arity is None else info.positional[:arity]
                        info.external_traced |= set(passed)
        self._enter_external()

    def _enter_external(self) -> None:
        """The functions traced code of other modules calls (`entries`), entered with the
        parameters it passes traced, as `JitContexts._enter_external` enters them: "f" is a def
        outside classes and functions, "Cls.m" a def directly in the body of a class `Cls` outside
        functions. The analysis enters only a name that means one def; the screen enters every
        def the name may mean (a module defining `f` twice: both). Those parameters stay traced
        whatever their default (`static_params`)."""
        for name, traced in self.entries:
            owner, _, fname = name.rpartition(".")
            if owner:
                defs = [d for d in self.method_defs.get(fname, ()) if self.class_of[id(d)].name == owner]
            else:
                defs = [d for d in self.defs_by_name.get(fname, ()) if id(d) not in self.class_of]
            for node in defs:
                if self.def_parent.get(id(node)) is None:  # outside functions (or unknown: entered)
                    info = self.info_of(node)
                    passed = traced & set(info.params)
                    info.external_traced |= passed
                    self._enter(info, passed)

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
                if screen_facts.rooted_at_param(node.func, info) and info.traced(node.func):
                    # calling a traced argument (`model(x)`, `self.net(x)`): the `__call__` of a
                    # class that may be a pytree (the analysis: of the one pytree class defining it)
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
                    # trace (`JitContexts._propagate_calls`); every parameter may be given
                    for callee in self._resolve(pos[0], allow_attr=False, call=node):
                        if callee is not info and any(info.traced(a) for a in (*pos[1:], *(k.value for k in node.keywords))):
                            if self._enter(callee, set(callee.params)):
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

    def _method_callees(self, call: ast.Call) -> list[ScreenFunction]:
        """The methods `x.m(...)` may run for the analysis (`JitContexts._resolve_callee`): the one
        plain method `m` of the classes outside functions when there is one (a name several
        classes define is not followed), and `self.m(...)` inside a method (or a def or lambda
        nested in one) the method `m` of its class. Static and class methods, properties and
        the defs of classes inside functions never run so."""
        func = call.func
        head = func.value
        while type(head) is ast.Attribute:
            head = head.value
        if type(head) is ast.Name and head.id in self.names.bindings:
            return []  # `jnp.where(...)`: a module's function, not a method
        defs = self.method_defs.get(func.attr)
        if not defs:
            return []
        plain = [
            info for info in map(self.info_of, defs)
            if info.is_method and not info.is_property and self.def_parent.get(id(info.node), 0) is None
        ]
        found = plain if len(plain) == 1 else []
        if len(plain) > 1 and type(func.value) is ast.Name:
            owner = self._enclosing_def(call)
            while owner is not None and self.def_parent.get(id(owner)) is not None:
                owner = self.def_parent[id(owner)]
            if owner is not None and id(owner) in self.class_of:
                method = self.info_of(owner)
                if method.is_method and method.positional[0] == func.value.id:
                    found = [info for info in plain if info.class_name == method.class_name]
        return found

    def _pytree_methods(self, name: str) -> list[ScreenFunction]:
        """The methods `name` of classes that may be pytrees (not `plain_method_classes`): the
        analysis follows a traced object's `__call__` and properties into pytree classes only."""
        defs = self.method_defs.get(name, ())
        if not defs:
            return []
        plain = self.plain_method_classes
        return [self.info_of(d) for d in defs if id(self.class_of[id(d)]) not in plain]

    def _python_params(self, info: ScreenFunction) -> set[str]:
        """Parameters annotated as admitting no array (`static_values.admits_no_array`), which the
        analysis never makes traced through a call (`FuncInfo.python_params`)."""
        found = self._python.get(info)
        if found is None:
            found = set()
            if not isinstance(info.node, ast.Lambda):
                a = info.node.args
                qualify = self.names.qualify_ast
                for p in (*a.posonlyargs, *a.args, *a.kwonlyargs):
                    if p.annotation is not None and screen_facts.admits_no_array(p.annotation, qualify):
                        found.add(p.arg)
            self._python[info] = found
        return found

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
