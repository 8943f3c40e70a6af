"""What the analysis keeps a Python value in traced code, as the trace screen
(`trace_screen.TraceScreen`) decides it: the parameters it drops from a traced entry (`self` of a
plain class, unpassed Python defaults), parameters annotated as admitting no array, parameters
every call passes a sequence display, attributes static on any object (properties returning Python
values, static fields) and the fields each class declares Python data. Split from `trace_screen`
so its walk reads apart from this bookkeeping; a mixin, so the facts stay on the one screen of the
module (as `jit_entries` is mixed into `JitContexts`).
"""

from __future__ import annotations

import ast

from jaxfix.analysis import astscan, pytrees, screen_facts
from jaxfix.analysis.defaults import python_default_ast
from jaxfix.analysis.jit_contexts import JIT_NAMES
from jaxfix.analysis.screen_function import ScreenFunction
from jaxfix.analysis.stubs import is_stub_ast
from jaxfix.analysis.transforms import CONSTRUCTION_HOOKS

_JIT_LAST_NAMES = frozenset(name.rpartition(".")[2] for name in JIT_NAMES)


class ScreenStatics:
    """Mixed into `TraceScreen`, which sets the attributes these methods read (`names`,
    `defs_by_name`, `method_defs`, `class_of`, `calls`, `calls_by_name`, `assigned_to`, `classes`,
    `aliases`, `_tree` and the caches `_static_params`, `_python`, `_callees`, `_aliases_of`,
    `_field_helpers`, `_static_attrs`, `_fields`, `_by_name`, `_sure_pytrees`, `_jit_arguments`,
    `_lambda_params`) and defines what they use (`info_of`, `_unwrap`, `_lexical_lookup`,
    `def_parent`, `plain_method_classes`)."""

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
        by_callee, of_calls_by_name, _ = self._calls_by_callee()
        calls += by_callee.get(id(info.node), [])
        # `jax.jit(jax.jacrev(f))(r, 0)` passes arguments to `f` too
        calls += [c for n in names for c in of_calls_by_name.get(n, ())]
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
        if name in self._calls_by_callee()[2]:
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

    def _calls_by_callee(self) -> tuple[dict[int, list[ast.Call]], dict[str, list[ast.Call]], set[str]]:
        """(id of a called expression -> the calls of it; the calls of a call's result by the name
        of the function `_unwrap` finds in the called call, `jax.jit(jax.jacrev(f))(r, 0)` under
        `f`; every name spelled in such a called call), made once: `static_params` and
        `passed_sequences` ask per function, and scanning every call each time was quadratic in a
        module of many jitted functions (a tenth of `check` on the 50k-line generated file)."""
        if self._callees is None:
            by_callee: dict[int, list[ast.Call]] = {}
            for call in self.calls:
                by_callee.setdefault(id(call.func), []).append(call)
            of_calls = [c for c in self.calls if type(c.func) is ast.Call]
            by_function: dict[str, list[ast.Call]] = {}
            for call in of_calls:
                function = self._unwrap(call.func)[0]
                if type(function) is ast.Name:
                    by_function.setdefault(function.id, []).append(call)
            spelled = {n.id for c in of_calls for n in ast.walk(c.func) if type(n) is ast.Name}
            self._callees = (by_callee, by_function, spelled)
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
