"""Which functions of a module run under a JAX trace, and with which arguments traced.

Entry points (a function is *under a trace*):
- decorated with `@jax.jit`, `@partial(jax.jit, ...)`, `@eqx.filter_jit`, `@jax.pmap`, `@jax.vmap`
  (and `@jax.grad`-like decorators stacked under one of those);
- wrapped anywhere in the module by a call `jax.jit(f, ...)` (also `jax.jit(jax.grad(f))`); the
  name it is bound to (`f_jit = jax.jit(f)`) is remembered, so its call sites count as `f`'s;
- passed as a body to `lax.scan`/`fori_loop`/`while_loop`/`cond`/`switch`/`map` or `jax.vmap`
  (names of functions or lambdas);
- interprocedural, within the module: a module function, a nested function, or a method of a
  class in the module called from traced code with traced arguments (`helper(x)`,
  `self.method(x)`, `model.apply(x)` when one class of the module defines `apply`; a
  `@property` read on a traced object).

For each traced function the analysis records the traced parameters on entry (everything but
`static_argnums`/`static_argnames`, arguments with a Python default that no call site in the
module passes, and `in_axes=None` arguments of `vmap`), where it is jitted (the decorator or
the `jax.jit(...)` call, to add `static_argnames` to), and whether it is differentiated
somewhere in the module (`jax.grad(f)`...), which makes `while_loop` rewrites a bad choice.

This module collects the functions and resolves names; the entries are found in `jit_entries`,
spread to a fixpoint in `jit_propagation` (both mixed into `JitContexts`), and the records
(`FuncInfo`, `JitSite`, `CallSite`) live in `jit_records`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import libcst as cst

from jaxfix.analysis import pytrees
from jaxfix.analysis.body_facts import assigned_names
from jaxfix.analysis.class_static_fields import ClassStaticFields, ShownAttributes
from jaxfix.analysis.jit_entries import TraceEntries
from jaxfix.analysis.jit_propagation import TracePropagation
from jaxfix.analysis.jit_records import (  # noqa: F401 (BODY_ARGS ... are imported from here too)
    BODY_ARGS,
    BODY_KEYWORDS,
    CALLED_FROM_ELSEWHERE,
    CALLED_FROM_TESTS,
    CallSite,
    FuncInfo,
    literal_ints,
    literal_strs,
    positional_args,
)
from jaxfix.analysis.names import ImportMap, dotted_name
from jaxfix.analysis.project_lookups import (
    attribute_read,
    cross_entries,
    name_used,
    own_packages,
    project_class_fields,
    project_field_helper,
)
from jaxfix.analysis.scopes import ScopeIndex, param_names
from jaxfix.analysis.static_helpers import ModuleCallOracle
from jaxfix.analysis.static_values import admits_no_array
from jaxfix.analysis.transforms import (  # noqa: F401 (JIT_NAMES ... are imported from here too)
    GRAD_NAMES,
    JIT_NAMES,
    PARTIAL_NAMES,
    PASS_THROUGH,
    VMAP_NAMES,
)
from jaxfix.analysis.value_kinds import ValueKinds
from jaxfix.analysis.walk import Visitor, statement_hooks, walk


@statement_hooks
class _Collector(Visitor):
    """One pass: functions, methods, nested defs, lambdas, calls, and for each function the
    calls and attribute reads of its own body with their innermost statement."""

    def __init__(self, ctx: JitContexts) -> None:
        self.ctx = ctx
        self.stack: list[FuncInfo] = []
        self.stmts: list[list[cst.CSTNode]] = [[]]
        self.classes: list[str] = []

    def enter_statement(self, node: cst.CSTNode) -> None:
        if self.stack:
            self.stmts[-1].append(node)

    def leave_statement(self, node: cst.CSTNode) -> None:
        if self.stack and self.stmts[-1] and self.stmts[-1][-1] is node:
            self.stmts[-1].pop()

    def _own(self, node: cst.CSTNode) -> None:
        if self.stack:
            stmt = self.stmts[-1][-1] if self.stmts[-1] else None
            self.ctx._own_nodes.setdefault(self.stack[-1], []).append((node, stmt))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.append(node.name.value)
        self.ctx.static_fields[node.name.value] = self.ctx._class_static_fields(node)
        self.ctx.class_nodes.append(node)
        if self.ctx._is_pytree_class(node):
            self.ctx.pytree_classes.add(node.name.value)

    def leave_ClassDef(self, node: cst.ClassDef) -> None:
        self.classes.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        parent = self.stack[-1] if self.stack else None
        in_class = self.classes[-1] if self.classes and (parent is None or parent.class_name) else None
        info = self.ctx._new_info(node, parent, in_class if parent is None else None)
        if parent is None and in_class is None:
            self.ctx.module_funcs[node.name.value] = info
        elif parent is None and in_class is not None:
            self.ctx.methods.setdefault(node.name.value, []).append(info)
        else:
            self.ctx.nested.setdefault(parent, {})[node.name.value] = info
        self.stack.append(info)
        self.stmts.append([])

    def leave_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.pop()
        self.stmts.pop()

    def visit_Lambda(self, node: cst.Lambda) -> None:
        parent = self.stack[-1] if self.stack else None
        info = self.ctx._new_info(node, parent, None)
        self.stack.append(info)
        self.stmts.append([])

    def leave_Lambda(self, node: cst.Lambda) -> None:
        self.stack.pop()
        self.stmts.pop()

    def visit_Call(self, node: cst.Call) -> None:
        self.ctx.calls.append(CallSite(node, self.stack[-1] if self.stack else None))
        self._own(node)
        if not self.stack and self.ctx.names.qualify(node.func) in pytrees.REGISTER_FUNCTIONS:
            first = positional_args(node)
            if first and isinstance(first[0], cst.Name):
                self.ctx.pytree_classes.add(first[0].value)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._own(node)

    def visit_Assign(self, node: cst.Assign) -> None:
        if len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Attribute):
            self.ctx.stored_on[id(node.value)] = node.targets[0].target.attr.value  # `self._f = jit(...)`
        if not self.stack and not self.classes:
            for t in node.targets:
                if isinstance(t.target, cst.Name):
                    self.ctx.module_names.add(t.target.value)
            value = node.value
            if len(node.targets) == 1 and isinstance(value, cst.Call) and isinstance(value.func, cst.Name):
                target = node.targets[0].target
                if isinstance(target, cst.Name):  # `H = PWCFactor(...)`: calls of `H` run its `__call__`
                    self.ctx.instances[target.value] = value.func.value



class JitContexts(TraceEntries, TracePropagation, ClassStaticFields, ShownAttributes):
    """The per-module answer: `functions` (every def and analysed lambda) with trace facts."""

    def __init__(
        self,
        module: cst.Module,
        names: ImportMap,
        external: dict | None = None,
        own_packages: frozenset[str] = frozenset(),
        class_fields: Callable[[str], frozenset[str]] | None = None,
        known_pytrees: frozenset[str] = frozenset(),
        scopes: Callable[[], ScopeIndex] | None = None,
        instance_class: Callable[..., str | None] | None = None,
        field_helper: Callable[[str], bool] | None = None,
        local_field_helpers: Callable[[], frozenset[str]] | None = None,
        attribute_read: Callable[[str], bool] | None = None,
        name_used: Callable[[str], bool] | None = None,
        python_class: Callable[[str], bool] | None = None,
    ) -> None:
        """`class_fields`: the static fields of a class named as written in this module
        (`SaveAt`, `diffrax.SaveAt`) that another module of the project defines; `field_helper`:
        whether a name this module imports makes a static field there (`nonpytree_field`);
        `local_field_helpers`: the module's own such functions (`pytrees.static_field_helpers`);
        `attribute_read`: whether the project may read an attribute (`project_lookups.attribute_read`);
        `name_used`: whether code may use a module-level name beyond its binding (`project_lookups.name_used`);
        `python_class`: whether a class of this module holds no arrays (`ValueKinds.holds_no_array`)."""
        self.python_class = python_class
        self.class_fields = class_fields
        self.attribute_read = attribute_read
        self.name_used = name_used
        self.instance_class = instance_class  # `ValueKinds.instance_class`: the class a value is an instance of
        self.field_helper = field_helper
        self.local_field_helpers = local_field_helpers
        self._fields_memo: dict[str, frozenset[str]] = {}
        self.module = module
        self._field_helpers: frozenset[str] | None = None  # `_static_field_helpers`, made when first asked
        self.names = names
        self.external = external or {}  # "f" / "Cls.m" -> callgraph.CrossEntry
        self.functions: dict[cst.CSTNode, FuncInfo] = {}
        self.module_funcs: dict[str, FuncInfo] = {}
        self.methods: dict[str, list[FuncInfo]] = {}
        self.nested: dict[FuncInfo, dict[str, FuncInfo]] = {}
        self._bound_locally: dict[FuncInfo, set[str]] = {}  # `_lookup`: names a function's body assigns
        self.calls: list[CallSite] = []
        self.aliases: dict[str, FuncInfo] = {}  # f_jit -> f
        self.stored_on: dict[int, str] = {}  # id of a value stored on an attribute (`self.x = v`) -> `x`
        self.module_names: set[str] = set()
        self.instances: dict[str, str] = {}  # module-level name -> the class it was built from (by name)
        self._sites_by_target: dict[FuncInfo, list[CallSite]] | None = None
        self._children: dict[FuncInfo, list[FuncInfo]] = {}
        self.static_fields: dict[str, set[str]] = {}
        self.static_classes: set[str] = set()  # `pytrees.is_static_class`: instances hold no traced leaf
        # flax module classes of this module, and the attribute names some of them hold data in
        self.flax_classes: set[str] = set()
        self.linen_classes: set[str] = set()
        self.flax_data: set[str] = set()
        # classes whose instances may be traced: this module's own test (`_is_pytree_class`) and
        # what `pytrees.pytree_classes` knows with the project (bases and registration helpers elsewhere)
        self.pytree_classes: set[str] = set(known_pytrees)
        self.class_nodes: list[cst.ClassDef] = []
        self._shown_attributes: dict[str | None, frozenset[str] | None] = {}  # `shown_attributes`, per class
        self._models: frozenset[str] | None = None  # `_model_classes`, made when first asked
        self._own_nodes: dict[FuncInfo, list[tuple[cst.CSTNode, cst.CSTNode | None]]] = {}
        # calls whose result the module's own helpers or out-of-sight imports decide
        self.call_oracle = ModuleCallOracle(module, names, own_packages=own_packages, scopes=scopes)
        self._scopes = scopes
        self._collect()
        self.static_attrs: frozenset[str] = self._static_properties()
        self.host_callbacks: set[FuncInfo] = self._host_callbacks()
        self._find_entries()
        for info in self.functions.values():
            info.transform_traced = set(info.entry_traced)
        self._sites_by_target = None  # asked while entries were found, before every jitted alias was known
        self._enter_external()
        self._propagate()

    # -- public ---------------------------------------------------------------
    def traced_functions(self) -> Iterator[FuncInfo]:
        for info in self.functions.values():
            if info.in_trace and info.facts is not None:
                yield info

    def info(self, node: cst.CSTNode) -> FuncInfo | None:
        return self.functions.get(node)

    def scope_index(self) -> ScopeIndex | None:
        """The file's `ScopeIndex` (None when the analysis was built without one)."""
        return self._scopes() if self._scopes is not None else None

    def own_nodes(self, info: FuncInfo, kind: type) -> list:
        """The attribute expressions or calls (`kind`) of `info`'s own body, not of the functions
        nested in it."""
        return [node for node, _ in self._own_nodes.get(info, ()) if isinstance(node, kind)]

    def method_of(self, class_name: str, method: str) -> FuncInfo | None:
        """The plain method (or property) `method` of the module's one class `class_name`."""
        return self._method_of(class_name, method)

    def locals_of(self, info: FuncInfo) -> set[str]:
        """The names `info`'s body binds."""
        return self._locals_of(info)

    def call_sites_of(self, info: FuncInfo) -> list[CallSite]:
        """Calls of `info` by its name or by a jitted alias of it, anywhere in the module."""
        if self._sites_by_target is None:
            index: dict[FuncInfo, list[CallSite]] = {}
            for site in self.calls:
                func = site.call.func
                if isinstance(func, cst.Call):  # `jax.jit(jax.jacrev(f))(r, l, 0)` calls `f` too
                    target, chain = self._unwrap(func, site.caller)
                    target = target if chain else None
                else:
                    target = self._resolve_callee(func, site.caller, allow_attr=False)
                if target is not None:
                    index.setdefault(target, []).append(site)
            self._sites_by_target = index
        return list(self._sites_by_target.get(info, ()))

    def bind_args(self, info: FuncInfo, call: cst.Call) -> dict[str, cst.BaseExpression] | None:
        """Parameter name -> argument expression for a call of `info`; None if it has *args/**kw."""
        params = list(info.positional)
        unbound = (
            isinstance(call.func, cst.Attribute)
            and isinstance(call.func.value, cst.Name)
            and call.func.value.value == info.class_name
        )
        if info.is_method and not unbound:
            params = params[1:]
        bound: dict[str, cst.BaseExpression] = {}
        i = 0
        for arg in call.args:
            if arg.star:
                return None
            if arg.keyword is None:
                if i >= len(params):
                    return None
                bound[params[i]] = arg.value
                i += 1
            else:
                bound[arg.keyword.value] = arg.value
        return bound

    # -- collection -----------------------------------------------------------
    def _new_info(self, node, parent: FuncInfo | None, class_name: str | None) -> FuncInfo:
        params = node.params
        positional = [p.name.value for p in (*params.posonly_params, *params.params)]
        defaults = {}
        annotations = {}
        python_params = set()
        class_annotations = {}
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            if p.default is not None:
                defaults[p.name.value] = p.default
            if p.annotation is not None:
                if admits_no_array(p.annotation.annotation, self.names.qualify):
                    python_params.add(p.name.value)
                written = class_annotation(p.annotation.annotation)
                if written is not None:
                    class_annotations[p.name.value] = written
                ann = self.names.qualify(p.annotation.annotation)
                if ann is None and isinstance(p.annotation.annotation, cst.SimpleString):
                    ann = p.annotation.annotation.evaluated_value
                annotations[p.name.value] = ann or ""
        name = node.name.value if isinstance(node, cst.FunctionDef) else "<lambda>"
        info = FuncInfo(
            node=node,
            name=name,
            params=param_names(params),
            positional=positional,
            defaults=defaults,
            annotations=annotations,
            python_params=python_params,
            class_annotations=class_annotations,
            class_name=class_name,
            parent=parent,
        )
        if isinstance(node, cst.FunctionDef) and class_name is not None and parent is None:
            decos = {self.names.qualify(d.decorator) for d in node.decorators}
            info.is_method = "staticmethod" not in decos and "classmethod" not in decos and bool(positional)
            info.is_property = "property" in decos or "functools.cached_property" in decos
        self.functions[node] = info
        return info

    def _collect(self) -> None:
        walk(self.module, _Collector(self))

    # -- name resolution --------------------------------------------------------
    def _lookup(self, name: str, scope: FuncInfo | None) -> FuncInfo | None:
        s = scope
        while s is not None:
            found = self.nested.get(s, {}).get(name)
            if found is not None:
                return found
            if name in s.params:  # `def run(f, y): return f(y)`: the argument, not an outer `f`
                return None
            if name in self._locals_of(s):
                # `evaluate = lambda p: ...; vmap(evaluate)` inside `def evaluate(...)`: the local
                # value, not the outer def (probml/rebayes@3b88072 demos/dekf_demos/half_moons_demo.ipynb)
                return None
            s = s.parent
        if name in self.aliases:
            return self.aliases[name]
        found = self.module_funcs.get(name)
        if found is None and name not in self.module_names:
            found = self._method_of(name, "__init__")  # `Cls(x)` runs `Cls.__init__(self, x)`
        if found is None and name in self.instances and self.instances[name] not in self.module_funcs:
            found = self._method_of(self.instances[name], "__call__")  # `H(t)` on a module-level instance
        return found

    def _locals_of(self, info: FuncInfo) -> set[str]:
        found = self._bound_locally.get(info)
        if found is None:
            found = self._bound_locally[info] = assigned_names(info.node)
        return found

    def _method_of(self, class_name: str, method: str) -> FuncInfo | None:
        """The plain method `method` defined in the body of the module's one class `class_name`."""
        found = [m for m in self.methods.get(method, []) if m.class_name == class_name and m.is_method]
        return found[0] if len(found) == 1 and sum(c.name.value == class_name for c in self.class_nodes) == 1 else None

    def _resolve_callee(self, func: cst.BaseExpression, scope: FuncInfo | None, allow_attr=True) -> FuncInfo | None:
        if isinstance(func, cst.Name):
            return self._lookup(func.value, scope)
        if isinstance(func, cst.Lambda):
            return self.functions.get(func)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and scope is not None:
            owner = scope
            while owner.parent is not None:
                owner = owner.parent
            if owner.is_method and owner.class_name and func.value.value == owner.positional[0]:
                found = self._method_of(owner.class_name, func.attr.value)  # `self.m`: this class's method
                if found is not None and not found.is_property:
                    return found
        if allow_attr and isinstance(func, cst.Attribute):
            head = func.value
            while isinstance(head, cst.Attribute):
                head = head.value
            if isinstance(head, cst.Name) and head.value in self.names.bindings:
                return None  # `jnp.where(...)`, `np.sum(...)`: a module's function, not a method
            if isinstance(head, cst.Name) and self._made_by_import(head, scope):
                return None  # `opt = optax.lbfgs()`, then `opt.init(params)`: the library's object
            candidates = [m for m in self.methods.get(func.attr.value, []) if m.is_method and not m.is_property]
            if len(candidates) == 1:
                return candidates[0]
        return None

    def _made_by_import(self, name: cst.Name, scope: FuncInfo | None) -> bool:
        """`name` is a local of `scope`'s function bound only to calls of an imported name
        (`opt = optax.lbfgs()`): an object of that library, whose methods are not this module's
        methods of the same name (alonfnt/bayex@<heldout16> bayex/optimizer.py:71, `opt.init(params)`
        taken for `Optimizer.init`, an eager method)."""
        if self._scopes is None or scope is None or not isinstance(scope.node, cst.FunctionDef):
            return False
        bindings = self._scopes().scope_info(scope.node).bindings.get(name.value, [])
        if not bindings:
            return False
        for b in bindings:
            if not (isinstance(b, cst.Assign) and isinstance(b.value, cst.Call)):
                return False
            head = b.value.func
            while isinstance(head, cst.Attribute):
                head = head.value
            if not (isinstance(head, cst.Name) and head.value in self.names.bindings):
                return False
        return True


def jit_contexts(ctx) -> JitContexts:
    """The shared fact, for `ctx.fact(JitContexts, jit_contexts)`; with a project index, the
    functions other modules' traced code calls into are entries too."""
    field_helper = project_field_helper(ctx)
    return JitContexts(
        ctx.module,
        ctx.names,
        external=cross_entries(ctx),
        own_packages=own_packages(ctx),
        class_fields=project_class_fields(ctx),
        field_helper=field_helper,
        local_field_helpers=lambda: pytrees.static_field_helpers(ctx.tree, ctx.names.qualify_ast, field_helper),
        known_pytrees=frozenset(name for name, _ in pytrees.pytree_classes(ctx)),
        scopes=lambda: ctx.fact(ScopeIndex, ScopeIndex.of),
        instance_class=lambda expr, at, some=False: ValueKinds.of(ctx).instance_class(expr, at, some=some),
        attribute_read=lambda name: attribute_read(ctx, name),
        name_used=lambda name: name_used(ctx, name),
        python_class=lambda name: ValueKinds.of(ctx).holds_no_array(name),
    )


def class_annotation(annotation: cst.BaseExpression) -> str | None:
    """`Cls`, `mod.Cls`, `Cls | None` or `Optional[Cls]` as written: the dotted class name."""
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        sides = [annotation.left, annotation.right]
        named = [s for s in sides if not (isinstance(s, cst.Name) and s.value == "None")]
        return class_annotation(named[0]) if len(named) == 1 else None
    if isinstance(annotation, cst.Subscript) and dotted_name(annotation.value) in ("Optional", "typing.Optional"):
        if len(annotation.slice) == 1 and isinstance(annotation.slice[0].slice, cst.Index):
            return class_annotation(annotation.slice[0].slice.value)
        return None
    text = dotted_name(annotation)
    return text if text is not None and text.rsplit(".", 1)[-1].lstrip("_")[:1].isupper() else None
