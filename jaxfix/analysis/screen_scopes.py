"""Which defs a name, a method call or a factory's result may run, for the trace screen
(`trace_screen.TraceScreen`), and the module facts that decide it: the enclosing def of each def,
the defs nested in each, the classes outside functions and which of them cannot be pytrees, the
instances built at module level. Split from `trace_screen` so that its walk (entries, propagation)
reads apart from these lookups; a mixin, so the facts stay on the one screen of the module, as
`jit_entries` is mixed into `JitContexts`.
"""

from __future__ import annotations

import ast
import bisect

from jaxfix.analysis import astscan, pytrees, screen_facts
from jaxfix.analysis.screen_function import ScreenFunction, body_facts
from jaxfix.analysis.transforms import CONSTRUCTION_HOOKS


class ScreenScopes:
    """Mixed into `TraceScreen`, which sets the attributes these methods read (`names`,
    `defs_by_name`, `method_defs`, `class_of`, `calls`, `classes`, `imports`, `aliases`, `_tree`
    and the lazily made `_def_parent`, `_top_classes`, `_plain_classes`, `_spans`, `_nested`,
    `_built_from`) and makes the functions (`info_of`)."""

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
                for name in astscan.STATEMENT_BLOCKS:
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
            for name in astscan.STATEMENT_BLOCKS:
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
