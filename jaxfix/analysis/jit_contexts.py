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
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import libcst as cst

from jaxfix.analysis import pytrees
from jaxfix.analysis.class_static_fields import ClassStaticFields, ShownAttributes
from jaxfix.analysis.defaults import is_hashable_literal, python_default
from jaxfix.analysis.names import ImportMap, dotted_name
from jaxfix.analysis.project_lookups import (
    attribute_read,
    cross_entries,
    own_packages,
    project_class_fields,
    project_field_helper,
)
from jaxfix.analysis.scopes import ScopeIndex
from jaxfix.analysis.static_helpers import ModuleCallOracle
from jaxfix.analysis.static_values import admits_no_array, dtype_params
from jaxfix.analysis.traced import FunctionFacts, analyse_function, assigned_names, param_names
from jaxfix.analysis.transforms import (  # noqa: F401 (JIT_NAMES ... are imported from here too)
    FILTERED_JITS,
    FILTERED_VMAPS,
    GRAD_NAMES,
    HOST_CALLBACKS,
    JIT_NAMES,
    LAX_BODIES,
    LAX_BODY_ARITY,
    LINEN_APPLY,
    PARTIAL_NAMES,
    PASS_THROUGH,
    RECEIVER_CLOSED_OVER,
    STATIC_ANNOTATIONS,
    STATIC_ARGNAMES_OPTIONS,
    STATIC_ARGNUMS_OPTIONS,
    VMAP_NAMES,
    lax_body_arity,
)
from jaxfix.analysis.value_kinds import ValueKinds
from jaxfix.analysis.walk import Visitor, children, returned_name, statement_hooks, walk

# lax (and friends) bodies: qualified name -> positions of function arguments (-1: a list of them)
BODY_ARGS: dict[str, tuple[int, ...]] = {
    **LAX_BODIES,
    "jax.vmap": (0,),
    "equinox.filter_vmap": (0,),
    "flax.nnx.vmap": (0,),
    "jax.checkpoint": (0,),
    "jax.remat": (0,),
}
BODY_KEYWORDS = {"f", "body_fun", "cond_fun", "true_fun", "false_fun", "fun", "branches"}


# reasons of a function entered from traced code of another module (`callgraph.CrossEntry`):
# from test code only (a test or a script under `tests/` jits it), or from the project's own code
CALLED_FROM_TESTS = "called from another module's test code"
CALLED_FROM_ELSEWHERE = "called from another module"


@dataclass(eq=False)
class JitSite:
    """One place where a function is jitted: a decorator or a `jax.jit(f, ...)` call."""

    node: cst.Decorator | cst.Call
    wrapper: str  # qualified name of the transform, e.g. "jax.jit"
    call: cst.Call | None  # the call carrying the options (`jax.jit(f, ...)`, `partial(jax.jit, ...)`), if any
    static_argnums: tuple[int, ...] = ()
    static_argnames: tuple[str, ...] = ()
    alias: str | None = None  # `f_jit = jax.jit(f)`: the name its callers use
    options_known: bool = True  # False when static_* are not literal (cannot be extended safely)


@dataclass(eq=False)
class FuncInfo:
    node: cst.FunctionDef | cst.Lambda
    name: str
    params: list[str]
    positional: list[str]
    defaults: dict[str, cst.BaseExpression]
    annotations: dict[str, str]
    class_name: str | None = None
    python_params: set[str] = field(default_factory=set)  # annotated as admitting no array (`admits_no_array`)
    class_annotations: dict[str, str] = field(default_factory=dict)  # param -> `Cls`/`mod.Cls` as written
    is_method: bool = False  # a plain method (first parameter is self)
    is_property: bool = False
    parent: "FuncInfo | None" = None
    # facts
    in_trace: bool = False
    reasons: list[str] = field(default_factory=list)
    entry_traced: set[str] = field(default_factory=set)
    static_params: set[str] = field(default_factory=set)
    jit_sites: list[JitSite] = field(default_factory=list)
    differentiated: bool = False
    facts: FunctionFacts | None = None
    # entered traced from another module of the project (`callgraph`): why, and what it is given
    called_from: str | None = None
    external_traced: set[str] = field(default_factory=set)
    # what the transforms this module applies to the function make traced, before propagation
    # (a value a `partial` binds comes from its caller: traced only if proven there)
    transform_traced: set[str] = field(default_factory=set)

    def param_index(self, name: str) -> int | None:
        return self.positional.index(name) if name in self.positional else None

    def traced_because(self) -> str:
        """For a message about a function only another module makes traced: why it is traced here."""
        return f" (traced here because {self.called_from})" if self.called_from else ""


@dataclass
class CallSite:
    call: cst.Call
    caller: FuncInfo | None  # None at module level


def literal_ints(node: cst.BaseExpression) -> tuple[int, ...] | None:
    if isinstance(node, cst.Integer):
        return (int(node.value),)
    if isinstance(node, (cst.Tuple, cst.List)):
        out = []
        for el in node.elements:
            if not isinstance(el.value, cst.Integer):
                return None
            out.append(int(el.value.value))
        return tuple(out)
    return None


def literal_strs(node: cst.BaseExpression) -> tuple[str, ...] | None:
    if isinstance(node, cst.SimpleString):
        return (node.evaluated_value,)
    if isinstance(node, (cst.Tuple, cst.List)):
        out = []
        for el in node.elements:
            if not isinstance(el.value, cst.SimpleString):
                return None
            out.append(el.value.evaluated_value)
        return tuple(out)
    return None


def _kwarg(call: cst.Call, name: str) -> cst.Arg | None:
    for arg in call.args:
        if arg.keyword is not None and arg.keyword.value == name:
            return arg
    return None


def _positional(call: cst.Call) -> list[cst.BaseExpression]:
    return [a.value for a in call.args if a.keyword is None and not a.star]


def _axes(expr: cst.BaseExpression | None) -> list[cst.BaseExpression] | None:
    """The elements of an `in_axes` sequence: a tuple or list display, also built with `+` and
    `* n` (`[0] + [None] * 9`, OTT's k-means); None when not written out."""
    if isinstance(expr, (cst.Tuple, cst.List)):
        return [el.value for el in expr.elements]
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Add):
            left, right = _axes(expr.left), _axes(expr.right)
            return None if left is None or right is None else left + right
        if isinstance(expr.operator, cst.Multiply):
            seq, times = (expr.left, expr.right) if isinstance(expr.right, cst.Integer) else (expr.right, expr.left)
            items = _axes(seq)
            if items is not None and isinstance(times, cst.Integer) and int(times.value) <= 64:
                return items * int(times.value)
    return None


def _body_arity(qual: str, call: cst.Call) -> int | None:
    """How many arguments the body of the lax call `call` gets (`transforms.lax_body_arity`)."""
    plain = not any(a.star or a.keyword is not None for a in call.args)
    return lax_body_arity(qual, len(call.args), plain)


def _defaulted_past(info: "FuncInfo", passed: int | None) -> set[str]:
    """Parameters of `info` past the first `passed` positional ones that have a default: a body
    called with fewer arguments runs them with their (Python) default."""
    if passed is None:
        return set()
    return {p for p in info.positional[passed:] if p in info.defaults}



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
            first = _positional(node)
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



class JitContexts(ClassStaticFields, ShownAttributes):
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
    ) -> None:
        """`class_fields`: the static fields of a class named as written in this module
        (`SaveAt`, `diffrax.SaveAt`) that another module of the project defines; `field_helper`:
        whether a name this module imports makes a static field there (`nonpytree_field`);
        `local_field_helpers`: the module's own such functions (`pytrees.static_field_helpers`);
        `attribute_read`: whether the project may read an attribute (`project_lookups.attribute_read`)."""
        self.class_fields = class_fields
        self.attribute_read = attribute_read
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
                written = _class_annotation(p.annotation.annotation)
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

    # -- entry points -------------------------------------------------------------
    def _transform_of(self, expr: cst.BaseExpression) -> tuple[str, cst.Call | None] | None:
        """(qualified transform, options call) for `jax.jit`, `partial(jax.jit, ...)`, `jax.jit(...)`-factories."""
        qual = self.names.qualify(expr)
        if qual in JIT_NAMES or qual in VMAP_NAMES or qual in PASS_THROUGH:
            return qual, None
        if isinstance(expr, cst.Call):
            fq = self.names.qualify(expr.func)
            pos = _positional(expr)
            if fq in PARTIAL_NAMES and pos:
                inner = self.names.qualify(pos[0])
                if inner in JIT_NAMES or inner in VMAP_NAMES or inner in PASS_THROUGH:
                    return inner, expr
            if (fq in JIT_NAMES or fq in VMAP_NAMES or fq in PASS_THROUGH) and not pos:
                return fq, expr
        return None

    def _module_constant(self, value: cst.BaseExpression) -> cst.BaseExpression:
        """`NAME`, `tuple(NAME)` or `list(NAME)` where the module binds `NAME` once, at its top
        level, to a literal tuple or list: that literal (jit reads `static_argnames=` when it wraps;
        jsw7460/sb3_jax@heldout13 pin offline_baselines_jax/td3/core.py:11,119,
        `static_argnames=tuple(STATIC_ARGNAMES)`); else `value` itself."""
        if (
            isinstance(value, cst.Call)
            and isinstance(value.func, cst.Name)
            and value.func.value in ("tuple", "list")
            and len(value.args) == 1
            and not value.args[0].star
            and value.args[0].keyword is None
        ):
            inner = value.args[0].value
        else:
            inner = value
        if not isinstance(inner, cst.Name):
            return value
        bound = []  # every store to the name anywhere in the module (nested scopes too: conservative)
        todo: list[cst.CSTNode] = [self.module]
        while todo:
            node = todo.pop()
            todo.extend(children(node))
            if isinstance(node, cst.Assign):
                targets = [t.target for t in node.targets]
            elif isinstance(node, (cst.AnnAssign, cst.AugAssign)):
                targets = [node.target]
            elif isinstance(node, cst.For):
                targets = [node.target]
            elif isinstance(node, cst.Global) and any(n.name.value == inner.value for n in node.names):
                return value  # declared global in a function: it may be rebound at run time
            elif isinstance(node, cst.Param) and node.name.value == inner.value:
                return value  # a parameter of that name may shadow the constant where jit is called
            else:
                continue
            if any(isinstance(t, cst.Name) and t.value == inner.value for t in targets):
                bound.append(node)
        top = {id(small) for stmt in self.module.body if isinstance(stmt, cst.SimpleStatementLine) for small in stmt.body}
        if len(bound) == 1 and id(bound[0]) in top and isinstance(bound[0], cst.Assign):
            if isinstance(bound[0].value, (cst.Tuple, cst.List)):
                return bound[0].value
        return value

    def _statics(self, site: JitSite, call: cst.Call | None, skip_first_positional: bool) -> None:
        if call is None:
            return
        for key in (*sorted(STATIC_ARGNUMS_OPTIONS), *STATIC_ARGNAMES_OPTIONS):
            arg = _kwarg(call, key)
            if arg is None:
                continue
            arg = arg.with_changes(value=self._module_constant(arg.value))
            if key in STATIC_ARGNUMS_OPTIONS:
                vals = literal_ints(arg.value)
                if vals is None:
                    site.options_known = False
                else:
                    site.static_argnums = tuple(site.static_argnums) + tuple(vals)
            else:
                vals = literal_strs(arg.value)
                if vals is None:
                    site.options_known = False
                else:
                    site.static_argnames = vals

    def _host_callbacks(self) -> set[FuncInfo]:
        """Functions given to `jax.pure_callback`, `io_callback`, `jax.debug.callback`
        (`transforms.HOST_CALLBACKS`): they run on the host with concrete values (measured: they
        see `ArrayImpl`), so their body is not traced, even when they are defined inside a traced
        function (Kinetix's `callback` that logs to wandb from its update step). One that is also
        called directly (`log(x)` beside `jax.debug.callback(log, x)`) runs under the trace too."""
        found: set[FuncInfo] = set()
        called: set[FuncInfo] = set()
        for site in self.calls:
            positions = HOST_CALLBACKS.get(self.names.qualify(site.call.func) or "")
            if positions is None:
                direct = self._resolve_callee(site.call.func, site.caller, allow_attr=False)
                if direct is not None:
                    called.add(direct)
                continue
            for fn_expr in self._body_args(site.call, positions):
                target = self._resolve_callee(fn_expr, site.caller, allow_attr=False)
                if target is not None:
                    found.add(target)
        return found - called

    def _mark(self, info: FuncInfo, reason: str) -> None:
        if info in self.host_callbacks:
            return  # runs on the host, never under a trace
        if not info.in_trace:
            info.in_trace = True
        if reason not in info.reasons:
            info.reasons.append(reason)

    def _apply_jit(self, info: FuncInfo, site: JitSite, offset: int = 0) -> None:
        """`offset`: how many leading parameters the jitted callable has bound (1 for `obj.method`)."""
        info.jit_sites.append(site)
        statics = set(site.static_argnames) | self._annotated_static(info, site.wrapper)
        for i in site.static_argnums:
            if 0 <= i + offset < len(info.positional):
                statics.add(info.positional[i + offset])
        info.static_params |= statics
        self._mark(info, f"jitted ({site.wrapper})")
        info.entry_traced |= self._nonstatic_params(info, statics, site.wrapper)

    def _annotated_static(self, info: FuncInfo, wrapper: str) -> set[str]:
        """The parameters `wrapper` makes static by their annotation (`STATIC_ANNOTATIONS`)."""
        generic = STATIC_ANNOTATIONS.get(wrapper)
        if generic is None or not isinstance(info.node, cst.FunctionDef):
            return set()
        params = info.node.params
        return {
            p.name.value
            for p in (*params.posonly_params, *params.params, *params.kwonly_params)
            if p.annotation is not None
            and isinstance(p.annotation.annotation, cst.Subscript)
            and self.names.qualify(p.annotation.annotation.value) == generic
        }

    def _receiver_closed_over(self, info: FuncInfo, had: set[str]) -> None:
        """`jax.vmap(self._zcr_single)`: the transform is given a bound method, so the receiver is
        no argument of it but a value the function closes over; its attributes are the Python
        values and concrete arrays they were (avitai/artifex@5fce040 temporal.py: `len(audio) -
        self.frame_length`, a config int). `had`: what was traced on entry before this transform;
        the receiver stays traced where something else (a decorator, a traced caller) makes it so."""
        if info.positional and info.positional[0] not in had:
            info.entry_traced.discard(info.positional[0])

    def _nonstatic_params(self, info: FuncInfo, statics: set[str], wrapper: str) -> set[str]:
        # filter_jit keeps Python values static (`n: int`, `levels: tuple[int, int]`, `run(x, true=True)`)
        # and so does a parameter the body passes where a dtype goes (`x.astype(dtype)`)
        python = set()
        if wrapper in FILTERED_JITS:
            python = info.python_params | self._literal_at_every_call(info)
            if isinstance(info.node, cst.FunctionDef):
                python |= dtype_params(info.node, self.names.qualify)
            python |= self._untyped_keywords(info)
        return {p for p in info.params if p not in statics and p not in python}

    def _untyped_keywords(self, info: FuncInfo) -> set[str]:
        """A `**kwargs` not annotated as arrays: under `eqx.filter_jit` each value is traced only if
        it is an array, and nothing says which are (jeertmans/DiffeRT@d22adc7
        differt/src/differt/geometry/_utils.py: `if epsilon := kwargs.get("epsilon"):` in a
        filter_jit function every caller gives a Python float or None), so what they hold is
        undecidable: never a reason to report."""
        star = info.node.params.star_kwarg
        if star is None:
            return set()
        ann = star.annotation.annotation if star.annotation is not None else None
        if ann is None or self.names.qualify(ann) in ("typing.Any", "object") or admits_no_array(ann, self.names.qualify):
            return {star.name.value}
        return set()

    def _literal_at_every_call(self, info: FuncInfo) -> set[str]:
        """Parameters every call of `info` in the module gives a Python value (passed, or the
        default): a literal (`run(x, true=True)` and `run(x, true=False)`, equinox's tests), or a
        parameter of the caller annotated as admitting no array (`batch_size: int`,
        danielward27/flowjax's `_get_contrastive_idxs`)."""
        sites = self.call_sites_of(info)
        bindings = [(site, self.bind_args(info, site.call)) for site in sites]
        if not bindings or any(b is None for _, b in bindings):
            return set()

        def python(value: cst.BaseExpression | None, caller: FuncInfo | None) -> bool:
            if value is None:
                return False
            if is_hashable_literal(value):
                return True
            return isinstance(value, cst.Name) and caller is not None and value.value in caller.python_params

        return {p for p in info.params if all(python(b.get(p, info.defaults.get(p)), site.caller) for site, b in bindings)}

    def _find_entries(self) -> None:
        for info in list(self.functions.values()):
            node = info.node
            if not isinstance(node, cst.FunctionDef):
                continue
            transforms = [t for d in node.decorators if (t := self._transform_of(d.decorator)) is not None]
            for deco in node.decorators:
                tr = self._transform_of(deco.decorator)
                if tr is None:
                    continue
                qual, call = tr
                if qual in JIT_NAMES:
                    site = JitSite(node=deco, wrapper=qual, call=call)
                    self._statics(site, call, False)
                    self._apply_jit(info, site)
                elif qual in VMAP_NAMES:
                    self._mark(info, f"vectorised ({qual})")
                    info.entry_traced |= set(info.params) - self._vmap_static(info, call, wrapper=qual)
                elif qual in GRAD_NAMES:
                    info.differentiated = True
            if transforms and info.is_method and info.in_trace:
                pass  # self is a pytree argument: traced like the rest
        # calls: jax.jit(f, ...), lax bodies, jax.grad(f)
        for site in self.calls:
            call = site.call
            qual = self.names.qualify(call.func)
            pos = _positional(call)
            if qual in JIT_NAMES or qual in VMAP_NAMES or qual in GRAD_NAMES or qual in PASS_THROUGH:
                if not pos:
                    continue
                target, chain = self._unwrap(pos[0], site.caller)
                if target is None:
                    continue
                bound = self._partial_bound(pos[0], site.caller, target)
                if bound:
                    # `jax.jit(partial(f, flag=True))`: the bound arguments are Python constants
                    self._mark(target, f"{qual.rsplit('.', 1)[-1]} of a partial")
                    statics = self._partial_statics(call, target, bound) if qual in JIT_NAMES else set()
                    target.static_params |= statics
                    target.entry_traced |= set(target.params) - bound - statics
                    if qual in GRAD_NAMES or any(q in GRAD_NAMES for q in chain):
                        target.differentiated = True
                    continue
                if qual in GRAD_NAMES or any(q in GRAD_NAMES for q in chain):
                    target.differentiated = True
                if qual in JIT_NAMES and self._unread_wrapper(call):
                    continue
                if qual in JIT_NAMES:
                    jsite = JitSite(node=call, wrapper=qual, call=call)
                    self._statics(jsite, call, True)
                    jsite.alias = self._assigned_name(call)
                    if not chain:
                        # `jax.jit(self.do, static_argnums=1)`: a bound method's positions count after `self`
                        bound_method = target.is_method and isinstance(pos[0], cst.Attribute)
                        had = set(target.entry_traced)
                        self._apply_jit(target, jsite, offset=1 if bound_method else 0)
                        if bound_method and qual in RECEIVER_CLOSED_OVER:
                            self._receiver_closed_over(target, had)
                        if jsite.alias:
                            self.aliases.setdefault(jsite.alias, target)
                    else:
                        # `jax.jit(jax.vmap(f, ...), static_argnums=(3, 4))`: vmap/grad keep `f`'s
                        # positions, so the jit's static arguments are `f`'s (flax lm1b predict_step)
                        self._mark(target, f"jitted through {', '.join(chain)}")
                        statics = set(jsite.static_argnames) | {
                            target.positional[i] for i in jsite.static_argnums if 0 <= i < len(target.positional)
                        }
                        target.static_params |= statics
                        target.entry_traced |= set(target.params) - statics
                elif qual in VMAP_NAMES:
                    self._mark(target, f"vectorised ({qual})")
                    # `jax.vmap(self.twist, in_axes=[0, 0, None])`: a bound method's axes count after `self`
                    bound_method = target.is_method and isinstance(pos[0], cst.Attribute)
                    had = set(target.entry_traced)
                    target.entry_traced |= set(target.params) - self._vmap_static(
                        target, call, 1 if bound_method else 0, wrapper=qual
                    )
                    if bound_method and qual in RECEIVER_CLOSED_OVER:
                        self._receiver_closed_over(target, had)
            if qual in BODY_ARGS and qual not in VMAP_NAMES:
                for fn_expr in self._body_args(call, BODY_ARGS[qual]):
                    target = self._resolve_callee(fn_expr, site.caller, allow_attr=False)
                    if target is None and (bound := self._partial_body(fn_expr, site.caller)) is not None:
                        # `fori_loop(0, n, partial(body, cfg=c), init)`, or a name bound once to
                        # that partial: the lax call passes the parameters the partial leaves
                        # open; the bound ones are traced where the partial's arguments are
                        # (`_propagate_calls` reads the partial as a call)
                        target, fixed = bound
                        self._mark(target, f"body of {qual.rsplit('.', 1)[-1]} (through a partial)")
                        open_params = [p for p in target.positional[len(fixed[0]) :] if p not in fixed[1]]
                        arity = _body_arity(qual, call)
                        target.entry_traced |= set(open_params[:arity] if arity is not None else open_params)
                        continue
                    if target is not None:
                        self._mark(target, f"body of {qual.rsplit('.', 1)[-1]}")
                        arity = _body_arity(qual, call)
                        target.entry_traced |= set(target.params) - _defaulted_past(target, arity)
                        # operands the call passes reach the body's defaulted parameters too
                        if arity is not None:
                            target.external_traced |= {p for p in target.positional[:arity] if p in target.defaults}

    def _vmap_static(self, info: FuncInfo, call: cst.Call | None, offset: int = 0, wrapper: str = "") -> set[str]:
        """Parameters the vmap leaves unmapped and unbatched: `in_axes=None`, and under
        `eqx.filter_vmap` (its default `in_axes` maps arrays only) the Python values
        (`_nonstatic_params`' reading: annotated, or a Python value at every call)."""
        python = set()
        if wrapper in FILTERED_VMAPS:
            python = info.python_params | self._literal_at_every_call(info)
        if call is None:
            return python
        arg = _kwarg(call, "in_axes")
        if arg is None:
            pos = _positional(call)
            arg_value = pos[1] if len(pos) > 1 else None
        else:
            arg_value = arg.value
        out = set(python)
        for i, axis in enumerate(_axes(arg_value) or ()):
            if isinstance(axis, cst.Name) and axis.value == "None" and i + offset < len(info.positional):
                out.add(info.positional[i + offset])
        return out

    def _body_args(self, call: cst.Call, positions: tuple[int, ...]) -> list[cst.BaseExpression]:
        pos = _positional(call)
        out = []
        for i in positions:
            if i == -1:
                if len(pos) > 1 and isinstance(pos[1], (cst.List, cst.Tuple)):
                    out.extend(el.value for el in pos[1].elements)
            elif i < len(pos):
                out.append(pos[i])
        for arg in call.args:
            if arg.keyword is not None and arg.keyword.value in BODY_KEYWORDS:
                out.append(arg.value)
        return out

    def _partial_body(self, expr, scope: FuncInfo | None):
        """For a lax body written `partial(f, *a, **k)`, or a name its scope binds exactly once to
        such a call: (`f`'s FuncInfo, (the positional arguments bound, the keywords bound)).
        None for anything else (a star argument, a name bound twice, `f` not of this module)."""
        if isinstance(expr, cst.Name):
            body = scope.node.body if scope is not None and isinstance(scope.node, cst.FunctionDef) else self.module
            values = [
                stmt.value
                for stmt in _flat_statements(body)
                if isinstance(stmt, (cst.Assign, cst.AnnAssign, cst.AugAssign))
                and any(
                    isinstance(t, cst.Name) and t.value == expr.value
                    for t in ([t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else [stmt.target])
                )
            ]
            if len(values) != 1:
                return None
            expr = values[0]
        if not (isinstance(expr, cst.Call) and self.names.qualify(expr.func) in PARTIAL_NAMES):
            return None
        pos = _positional(expr)
        if not pos or any(a.star for a in expr.args):
            return None
        target = self._resolve_callee(pos[0], scope, allow_attr=False)
        if target is None or target.is_method:
            return None
        return target, (pos[1:], {a.keyword.value for a in expr.args if a.keyword is not None})

    def _partial_statics(self, call: cst.Call, target: FuncInfo, bound: set[str]) -> set[str]:
        """The static arguments of `jax.pmap(partial(f, ...), static_broadcasted_argnums=(0, 1))`
        (jit's alike) as `f`'s parameters: the positions count from the first parameter the partial
        leaves open (scenic's polyvit `train_step(task, dataset, modality, ...)`, pmapped as a
        partial with keywords bound and its three leading arguments static)."""
        jsite = JitSite(node=call, wrapper="", call=call)
        self._statics(jsite, call, True)
        lead = 0
        while lead < len(target.positional) and target.positional[lead] in bound:
            lead += 1
        open_positional = target.positional[lead:]
        return set(jsite.static_argnames) | {
            open_positional[i] for i in jsite.static_argnums if -len(open_positional) <= i < len(open_positional)
        }

    def _partial_bound(self, expr, scope: FuncInfo | None, target: FuncInfo) -> set[str]:
        """Parameters of `target` fixed by `functools.partial` on the way to a transform: written in
        place (`jax.jit(partial(f, n=3))`), or through a name of the same scope rebound to a partial of
        the same function (`f = partial(f, flag=True)` ... `jax.pmap(f)`)."""
        while isinstance(expr, cst.Call) and self.names.qualify(expr.func) not in PARTIAL_NAMES:
            pos = _positional(expr)
            if not pos:
                return set()
            expr = pos[0]
        partials: list[cst.Call] = []
        if isinstance(expr, cst.Call):
            partials.append(expr)
        elif isinstance(expr, cst.Name):
            body = scope.node.body if scope is not None and isinstance(scope.node, cst.FunctionDef) else self.module
            for stmt in _flat_statements(body):
                if (
                    isinstance(stmt, cst.Assign)
                    and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0].target, cst.Name)
                    and stmt.targets[0].target.value == expr.value
                    and isinstance(stmt.value, cst.Call)
                    and self.names.qualify(stmt.value.func) in PARTIAL_NAMES
                ):
                    partials.append(stmt.value)
        out: set[str] = set()
        for call in partials:
            pos = _positional(call)
            if not pos or self._resolve_callee(pos[0], scope, allow_attr=False) is not target:
                continue
            if any(a.star for a in call.args):
                continue
            params = list(target.positional)
            out.update(params[: len(pos) - 1])
            out.update(a.keyword.value for a in call.args if a.keyword is not None)
        return out

    def _unwrap(self, expr, scope) -> tuple[FuncInfo | None, list[str]]:
        chain: list[str] = []
        while isinstance(expr, cst.Call):
            q = self.names.qualify(expr.func)
            pos = _positional(expr)
            if q in PARTIAL_NAMES and pos:
                expr = pos[0]
                continue
            if q in JIT_NAMES or q in VMAP_NAMES or q in PASS_THROUGH:
                if not pos:
                    return None, chain
                chain.append(q)
                expr = pos[0]
            else:
                return self._made_by(expr, scope), chain
        return self._resolve_callee(expr, scope, allow_attr=False), chain

    def _made_by(self, call: cst.Call, scope: FuncInfo | None) -> FuncInfo | None:
        """The nested def a factory of this file returns: `jax.jit(make_step(lr))` compiles the
        `step` that `def make_step(lr): def step(p, x): ...; return step` hands out, when every
        `return` of the factory names that one def (research scripts' `jax.jit(make_train_step(cfg))`)."""
        factory = self._resolve_callee(call.func, scope, allow_attr=False)
        if factory is None or not isinstance(factory.node, cst.FunctionDef):
            return None
        name = returned_name(factory.node)
        made = self.nested.get(factory, {}).get(name) if name is not None else None
        return made if made is not None and isinstance(made.node, cst.FunctionDef) else None

    def _unread_wrapper(self, call: cst.Call) -> bool:
        """`self._compiled = jax.jit(self._sample_fn)` where nothing in the project reads
        `_compiled`: the jitted function is never called, so the jit traces nothing
        (demon2036/MLLM-JAX@8b19c02 deprecated/MLLM_JAX/language/gemma/sampler.py:127, its calls
        commented out: `_sample_fn` runs only eagerly, heldout12 JAX302/JAX401 wrong)."""
        if self.attribute_read is None:
            return False
        attr = self.stored_on.get(id(call))
        return attr is not None and not self.attribute_read(attr)

    def _assigned_name(self, call: cst.Call) -> str | None:
        """The name a module-level `name = call` binds (the values indexed once: asked per call,
        a walk of the module body each made a file with thousands of jits quadratic)."""
        if getattr(self, "_assigned", None) is None:
            self._assigned = {}
            for stmt in self.module.body:
                for small in stmt.body if isinstance(stmt, cst.SimpleStatementLine) else ():
                    target = small.targets[0].target if isinstance(small, cst.Assign) and len(small.targets) == 1 else None
                    if isinstance(target, cst.Name):
                        self._assigned.setdefault(id(small.value), target.value)
        return self._assigned.get(id(call))

    def _enter_external(self) -> None:
        """Functions that traced code of another module calls with traced arguments."""
        for name, entry in self.external.items():
            cls, _, fname = name.rpartition(".")
            if cls:
                found = [m for m in self.methods.get(fname, []) if m.class_name == cls and m.parent is None]
            else:
                found = [self.module_funcs[fname]] if fname in self.module_funcs else []
            if len(found) != 1:
                continue
            info = found[0]
            kind = CALLED_FROM_TESTS if entry.from_tests else CALLED_FROM_ELSEWHERE
            self._mark(info, f"{kind}: {entry.reason}")
            info.called_from = entry.reason
            traced = set(entry.traced) & set(info.params)
            info.external_traced |= traced
            info.entry_traced |= traced

    # -- propagation --------------------------------------------------------------
    def _outer_lookup(self, info: FuncInfo):
        parent = info.parent

        def lookup(name: str) -> bool:
            p = parent
            while p is not None:
                if p.facts is not None and name in p.facts.locals:
                    return name in p.facts.all_traced
                p = p.parent
            return False

        return lookup

    def _passed_explicitly(self, info: FuncInfo, param: str) -> bool:
        """Some call of `info` in the module passes `param` a value that may be traced: anything
        but a hashable literal (`_scan_fun(state, val, first=True)` beside `lax.scan(_scan_fun,
        ...)` keeps `first` a Python bool everywhere)."""
        decorated = isinstance(info.node, cst.FunctionDef) and any(
            self._transform_of(d.decorator) is not None for d in info.node.decorators
        )
        for site in self.call_sites_of(info):
            bound = self.bind_args(info, site.call)
            if bound is None:
                return True
            if param in bound and not (
                is_hashable_literal(bound[param]) and not decorated and self._plain_call(site.call)
            ):
                return True
        return False

    def _plain_call(self, call: cst.Call) -> bool:
        """A call of the function itself, not through a transform (`jax.jit(jax.jacrev(f))(r, 0)`)
        or a jitted alias (`f_jit(r, 0)`): those trace a literal argument like any other."""
        func = call.func
        if isinstance(func, cst.Call):
            return False
        return not (isinstance(func, cst.Name) and func.value in self.aliases)

    def _rooted_at_param(self, expr: cst.BaseExpression, info: FuncInfo) -> bool:
        """`model`, `self.model`, `cfg.net` where the head is a parameter of `info` not rebound in it."""
        while isinstance(expr, cst.Attribute):
            expr = expr.value
        if not isinstance(expr, cst.Name) or expr.value not in info.params:
            return False
        return info.facts is None or expr.value not in _rebound(info)

    def _param_fields(self, info: FuncInfo, receiver: str | None) -> dict[str, frozenset[str]]:
        """Parameters annotated with a class (of this module, or with a project index of another
        one): the class's fields that hold Python data, read as static on the parameter."""
        out: dict[str, frozenset[str]] = {}
        for param, written in info.class_annotations.items():
            if param == receiver:
                continue
            found = self._fields_memo.get(written)
            if found is None:
                if written in self.static_fields and written not in self.module_funcs:
                    found = frozenset(self.static_fields[written])
                elif self.class_fields is not None:
                    found = self.class_fields(written)
                else:
                    found = frozenset()
                self._fields_memo[written] = found
            if found:
                out[param] = found
        return out

    def _sequence_params(self, info: FuncInfo) -> set[str]:
        """Parameters that every call site in the module passes a tuple/list display (`ids=(i, j)`),
        whose default, if any, is one too or None: Python sequences, not arrays."""
        if isinstance(info.node, cst.Lambda) or info.jit_sites:
            return set()
        sites = self.call_sites_of(info)
        if not sites:
            return set()
        out = set()
        for p in info.params:
            default = info.defaults.get(p)
            if default is not None and not (
                isinstance(default, (cst.Tuple, cst.List))
                or (isinstance(default, cst.Name) and default.value == "None")
            ):
                continue
            ok = True
            for site in sites:
                bound = self.bind_args(info, site.call)
                if bound is None:
                    ok = False
                    break
                arg = bound.get(p)
                if arg is None:
                    if default is None:
                        ok = False
                        break
                elif not isinstance(arg, (cst.Tuple, cst.List, cst.ListComp)):
                    ok = False
                    break
            if ok:
                out.add(p)
        return out

    def _entry(self, info: FuncInfo) -> set[str]:
        entry = set(info.entry_traced) - info.static_params
        if info.is_method and info.positional and info.class_name not in self.pytree_classes:
            # an instance of a plain class cannot be a traced argument: `self` is a Python object
            entry.discard(info.positional[0])
        for p in list(entry):
            if info.class_annotations.get(p) in self.static_classes:
                entry.discard(p)  # `cfg: Config` of a `register_static` class: hashed, never traced
                continue
            default = info.defaults.get(p)
            if p in info.external_traced:
                continue  # passed traced by a call in another module
            # a nested def's defaults are evaluated in its enclosing function: only where that
            # function is not traced itself can a name there not hold a tracer
            nested = info.parent is not None and (info.parent.in_trace or bool(info.parent.reasons))
            if default is not None and python_default(default, nested) and not self._passed_explicitly(info, p):
                entry.discard(p)  # never passed: stays the Python default under jit (`defaults`)
        return entry

    def _propagate(self) -> None:
        """Worklist to a fixpoint: analyse each traced function, push traced arguments into the
        functions it calls, re-analyse those whose traced entry grew (and nested functions, whose
        free variables come from the enclosing trace)."""
        for info in self.functions.values():
            if info.parent is not None and info not in self.host_callbacks:
                self._children.setdefault(info.parent, []).append(info)
        work = [i for i in self.functions.values() if i.in_trace]
        queued = set(work)
        budget = 20 * max(len(self.functions), 1)
        while work and budget > 0:
            budget -= 1
            info = work.pop(0)
            queued.discard(info)
            entry = self._entry(info)
            receiver = info.positional[0] if info.is_method and info.positional else None
            facts = analyse_function(
                info.node,
                self.names,
                entry,
                self._outer_lookup(info),
                receiver=receiver,
                static_fields=self.static_fields.get(info.class_name or "", ()),
                param_fields=self._param_fields(info, receiver),
                sequence_params=self._sequence_params(info),
                static_attrs=self.static_attrs,
                calls=self.call_oracle,
            )
            old = info.facts
            info.facts = facts
            wake: list[FuncInfo] = []
            if old is None or old.all_traced != facts.all_traced:
                for child in self._children.get(info, ()):
                    if child in self.host_callbacks:
                        continue  # defined in traced code, run on the host (`jax.debug.callback(child, ...)`)
                    if not child.in_trace:
                        child.in_trace = True
                        child.reasons.append(f"defined inside traced `{info.name}`")
                    wake.append(child)
            wake.extend(self._propagate_calls(info, facts))
            for other in wake:
                if other not in queued:
                    queued.add(other)
                    work.append(other)

    def _linen_applied(self, call: cst.Call) -> FuncInfo | None:
        """The `__call__` that `model.apply(variables, *args)` runs (flax.linen's `Module.apply`,
        `transforms.LINEN_APPLY`): `model` a module-level instance of a linen module class of this
        module, or any receiver when the module defines exactly one linen module class with a
        `__call__`. A `method=` argument (another method runs) or a positional star is no call."""
        func = call.func
        if not (isinstance(func, cst.Attribute) and func.attr.value in LINEN_APPLY) or not call.args:
            return None
        head = func.value
        while isinstance(head, cst.Attribute):
            head = head.value
        if isinstance(head, cst.Name) and head.value in self.names.bindings:
            return None  # `nn.apply(fn, module)`: a module's function, not a model's method
        if call.args[0].star or call.args[0].keyword is not None or any(
            a.keyword is not None and a.keyword.value == "method" for a in call.args
        ):
            return None
        linen = sorted(self.linen_classes)
        if isinstance(func.value, cst.Name) and self.instances.get(func.value.value) in linen:
            return self._method_of(self.instances[func.value.value], "__call__")
        calls = [m for name in linen if (m := self._method_of(name, "__call__")) is not None]
        return calls[0] if len(calls) == 1 else None

    def call_target(
        self, call: cst.Call, info: FuncInfo, facts: FunctionFacts, env, *, guess: bool = True
    ) -> tuple[FuncInfo | None, cst.BaseExpression | None, cst.Call]:
        """(the function `call` runs, the object it runs on as `self` or None, the call as that
        function sees it). Beyond a plain call of a function or method of this module: a linen
        `model.apply(variables, x)` runs `__call__` on `x`; a `partial(f, ...)` built in traced code,
        and a transform applied there (`nnx.value_and_grad(loss_fn)(model, x)`), run `f` in this
        trace. With `guess`, calling a traced parameter by its name (`model(x)`) runs the `__call__`
        of the one model class of the module that defines one (a flax or equinox module: a guess
        the proof, `proven_traced`, does not make). Not a method or attribute of the parameter
        (`batch.pop("labels")`, `state.apply_fn(x)`), nor a plain pytree's `__call__`: in
        sanchit-gandhi/seq2seq-speech (heldout9) those guesses ran a host-side
        `@flax.struct.dataclass` data collator in pmapped steps (`to_dtype(x)`, `batch.pop(...)`):
        6 wrong JAX402 with safe fixes."""
        callee = self._resolve_callee(call.func, info)
        receiver = call.func.value if isinstance(call.func, cst.Attribute) else None
        if callee is None and isinstance(call.func, cst.Name) and call.func.value in info.class_annotations:
            # `model(x)` with `model: Model` (a class of this module): `Model.__call__` on `model`
            callee = self._method_of(info.class_annotations[call.func.value], "__call__")
            receiver = call.func if callee is not None else None
        if callee is None and (callee := self._passed_model_call(call.func, info)) is not None:
            receiver = call.func  # `model(x)`, `model` an `MLP(...)` at every call: `MLP.__call__`
        if (
            callee is None
            and guess
            and isinstance(call.func, cst.Name)
            and self._rooted_at_param(call.func, info)
            and facts.expr_traced(call.func, env)
        ):
            # calling a traced argument (`model(x)`): the `__call__` of the one model class of the
            # module that defines it. Locals (`partial(...)` objects, closures) are not guessed at.
            models = self._model_classes()
            candidates = [m for m in self.methods.get("__call__", []) if m.is_method and m.class_name in models]
            if len(candidates) == 1:
                callee, receiver = candidates[0], call.func
        if callee is None and (applied := self._linen_applied(call)) is not None:
            # `model.apply(variables, x, train)`: the linen module's `__call__` runs on `x`, `train`
            callee, receiver = applied, None
            call = call.with_changes(args=call.args[1:])
        if callee is None and self.names.qualify(call.func) in PARTIAL_NAMES:
            # `partial(f, cfg=v)` built in traced code: a deferred call of `f`, which can only
            # run inside this trace (its arguments are this trace's values)
            pos = _positional(call)
            callee = self._resolve_callee(pos[0], info, allow_attr=False) if pos else None
            if callee is not None and not callee.is_method and not call.args[0].star:
                call = call.with_changes(func=pos[0], args=call.args[1:])
            else:
                callee = None
        if callee is None and isinstance(call.func, cst.Call):
            # `nnx.value_and_grad(loss_fn)(model, x)` in traced code: the transformed function
            # runs inside this trace, on these arguments (a transform under a trace is inlined)
            inner = call.func
            qual = self.names.qualify(inner.func)
            pos = _positional(inner)
            if pos and (qual in PASS_THROUGH or qual in JIT_NAMES or qual in VMAP_NAMES):
                target, chain = self._unwrap(pos[0], info)
                if target is not None and not chain and not target.is_method:
                    callee = target
                    call = call.with_changes(func=pos[0])
                elif target is None and (model_call := self._passed_model_call(pos[0], info)) is not None:
                    callee, receiver = model_call, pos[0]  # equinox's `jax.vmap(model)(x)`
                    call = call.with_changes(func=pos[0])
        if callee is None and isinstance(call.func, cst.Name) and (wrapped := self._local_transform(call.func, info)):
            # `grad_fn = nnx.value_and_grad(loss_fn, has_aux=True)`, then `grad_fn(model, batch)`
            target, chain = self._unwrap(wrapped, info)
            if target is not None and not chain and not target.is_method:
                callee, call = target, call.with_changes(func=wrapped)
        return callee, receiver, call

    def _local_transform(self, name: cst.Name, info: FuncInfo) -> cst.BaseExpression | None:
        """`f` when `name` is bound once in `info`'s function, to a transform of `f` that passes
        the arguments through (`grad_fn = nnx.value_and_grad(loss_fn)`: Flax's training steps)."""
        if self._scopes is None or not isinstance(info.node, cst.FunctionDef):
            return None
        bindings = self._scopes().scope_info(info.node).bindings.get(name.value, [])
        if len(bindings) != 1 or not isinstance(bindings[0], cst.Assign) or len(bindings[0].targets) != 1:
            return None
        value = bindings[0].value
        if not (isinstance(value, cst.Call) and isinstance(bindings[0].targets[0].target, cst.Name)):
            return None
        pos = _positional(value)
        qual = self.names.qualify(value.func)
        return pos[0] if pos and (qual in PASS_THROUGH or qual in JIT_NAMES or qual in VMAP_NAMES) else None

    def _passed_model_call(self, func: cst.BaseExpression, info: FuncInfo) -> FuncInfo | None:
        """`MLP.__call__` when `func` is a parameter that every call this module shows gives an
        `MLP(...)` (a flax or equinox model class of the module; `ValueKinds.instance_class`, which
        follows a nested `loss_fn` through `nnx.value_and_grad(loss_fn)(model)`). A binding whose
        class is not known (`model, opt = step(model, opt)` in the loop) does not stop it: the first
        call gets the `MLP`, so its `__call__` runs under the trace."""
        if self.instance_class is None or not isinstance(func, cst.Name) or not self._rooted_at_param(func, info):
            return None
        cls = self.instance_class(func, func, some=True)
        return self._method_of(cls, "__call__") if cls in self._model_classes() else None

    def _model_classes(self) -> frozenset[str]:
        """The module's flax (nnx, linen) and equinox module classes: models, whose `__call__` a
        traced `model(x)` may run (`call_target`'s guess); a plain pytree (`flax.struct.dataclass`)
        with a `__call__` is no candidate (memoised: asked at every guessed call)."""
        if self._models is not None:
            return self._models
        found = set(self.flax_classes)
        grew = True
        while grew:
            grew = False
            for node in self.class_nodes:
                name = node.name.value
                if name in found or name not in self.pytree_classes:
                    continue
                for base in node.bases:
                    qual = self.names.qualify(base.value) or ""
                    if qual.startswith("equinox.") and qual.endswith("Module") or (
                        isinstance(base.value, cst.Name) and base.value.value in found
                    ):
                        found.add(name)
                        grew = True
                        break
        self._models = frozenset(found)
        return self._models

    def _propagate_calls(self, info: FuncInfo, facts: FunctionFacts) -> list[FuncInfo]:
        woken: list[FuncInfo] = []
        for node, stmt_env in self._calls_in(info):
            resolved = self._resolve_callee(node.func, info)
            if isinstance(node.func, cst.Name) and (resolved is None or resolved.name == "__init__"):
                cls = node.func.value if resolved is None else resolved.class_name
                if self._lookup(cls, info) is resolved and any(facts.expr_traced(a.value, stmt_env) for a in node.args):
                    woken.extend(self._construction_hooks(cls, info))
            callee, receiver, call = self.call_target(node, info, facts, stmt_env)
            if callee is None or callee is info:
                continue
            bound = self.bind_args(callee, call)
            if bound is None:
                newly = self._star_traced(callee, call, facts, stmt_env)
            else:
                newly = {pname for pname, arg in bound.items() if facts.expr_traced(arg, stmt_env)}
            # `def set_cost(self, ..., use_danskin: bool)`: a parameter annotated as admitting no
            # array gets a Python value in a working program (OTT); a jit entry still traces it
            newly -= callee.python_params
            if callee.is_method and receiver is not None and callee.positional:
                if callee.class_name in self.pytree_classes and facts.expr_traced(receiver, stmt_env):
                    newly.add(callee.positional[0])
            if newly and not newly <= callee.entry_traced:
                callee.entry_traced |= newly
                woken.append(callee)
            if newly and not callee.in_trace:
                self._mark(callee, f"called from traced `{info.name}`")
                woken.append(callee)
        # properties read on traced objects
        for attr, env in self._attrs_in(info):
            props = [
                m
                for m in self.methods.get(attr.attr.value, [])
                if m.is_property and m.class_name in self.pytree_classes
            ]
            if len(props) == 1 and facts.expr_traced(attr.value, env):
                prop = props[0]
                if prop.positional and prop.positional[0] not in prop.entry_traced:
                    prop.entry_traced.add(prop.positional[0])
                    self._mark(prop, f"read on a traced object in `{info.name}`")
                    woken.append(prop)
        return woken

    def _star_traced(self, callee: FuncInfo, call: cst.Call, facts: FunctionFacts, env) -> set[str]:
        """`helper(*carry)` with a traced `carry`: the positional parameters from the star on."""
        start = 0
        for arg in call.args:
            if arg.star == "**" or (arg.star == "" and arg.keyword is not None):
                return set()
            if arg.star == "*":
                if not facts.expr_traced(arg.value, env):
                    return set()
                params = callee.positional[1:] if callee.is_method else callee.positional
                return set(params[start:])
            start += 1
        return set()

    def construction_hooks_of(self, class_name: str) -> list[FuncInfo]:
        """The `__post_init__`/`__check_init__` (dataclass, equinox) a construction of the module's
        pytree class `class_name` runs."""
        if class_name not in self.pytree_classes or class_name in self.module_funcs or class_name in self.module_names:
            return []
        hooks = (self._method_of(class_name, hook) for hook in ("__post_init__", "__check_init__"))
        return [h for h in hooks if h is not None and h.positional]

    def _construction_hooks(self, class_name: str, caller: FuncInfo) -> list[FuncInfo]:
        """A pytree class built with traced fields runs `__post_init__`/`__check_init__` (dataclass,
        equinox) on them: `self` is traced there."""
        out = []
        for found in self.construction_hooks_of(class_name):
            if found.positional[0] not in found.entry_traced:
                found.entry_traced.add(found.positional[0])
                self._mark(found, f"runs when traced `{caller.name}` builds a `{class_name}`")
                out.append(found)
        return out

    def _own_with_env(self, info: FuncInfo, kind):
        facts = info.facts
        entry = frozenset(facts.entry_traced)
        out = []
        for node, stmt in self._own_nodes.get(info, ()):
            if isinstance(node, kind):
                out.append((node, facts.before.get(stmt, entry) if stmt is not None else entry))
        return out

    def _calls_in(self, info: FuncInfo):
        return self._own_with_env(info, cst.Call)

    def _attrs_in(self, info: FuncInfo):
        return self._own_with_env(info, cst.Attribute)


def _flat_statements(body) -> Iterator[cst.BaseSmallStatement]:
    """The small statements of a function body or module, inside `if`/`with`/loops/`try` too, but
    not inside nested functions or classes."""
    stmts = body.body
    if isinstance(stmts, cst.BaseSuite):
        stmts = stmts.body
    for stmt in stmts:
        if isinstance(stmt, cst.SimpleStatementLine):
            yield from stmt.body
        elif isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            continue
        elif isinstance(stmt, cst.BaseCompoundStatement):
            for block in (getattr(stmt, "body", None), getattr(getattr(stmt, "orelse", None), "body", None)):
                if isinstance(block, cst.IndentedBlock):
                    yield from _flat_statements(block)
            if isinstance(getattr(stmt, "orelse", None), cst.If):
                yield from _flat_statements(cst.IndentedBlock(body=[stmt.orelse]))
            for h in getattr(stmt, "handlers", ()):
                yield from _flat_statements(h.body)


def _rebound(info: FuncInfo) -> set[str]:
    from jaxfix.analysis.traced import assigned_names

    return assigned_names(info.node)


def _nodes_with_env(func_node, facts: FunctionFacts, kind):
    """Nodes of `kind` in the function's own body (not nested scopes), with the env of their statement."""
    out = []

    class V(cst.CSTVisitor):
        def __init__(self) -> None:
            self.env_stack = [frozenset(facts.entry_traced)]

        def on_visit(self, node: cst.CSTNode) -> bool:
            if node in facts.before:
                self.env_stack.append(facts.before[node])
            if node is not func_node and isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                return False
            if isinstance(node, kind):
                out.append((node, self.env_stack[-1]))
            return True

        def on_leave(self, original_node: cst.CSTNode) -> None:
            if original_node in facts.before:
                self.env_stack.pop()

    if isinstance(func_node, cst.Lambda):
        walk(func_node.body, V())
    else:
        walk(func_node.body, V())
    return out


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
    )


def _class_annotation(annotation: cst.BaseExpression) -> str | None:
    """`Cls`, `mod.Cls`, `Cls | None` or `Optional[Cls]` as written: the dotted class name."""
    if isinstance(annotation, cst.BinaryOperation) and isinstance(annotation.operator, cst.BitOr):
        sides = [annotation.left, annotation.right]
        named = [s for s in sides if not (isinstance(s, cst.Name) and s.value == "None")]
        return _class_annotation(named[0]) if len(named) == 1 else None
    if isinstance(annotation, cst.Subscript) and dotted_name(annotation.value) in ("Optional", "typing.Optional"):
        if len(annotation.slice) == 1 and isinstance(annotation.slice[0].slice, cst.Index):
            return _class_annotation(annotation.slice[0].slice.value)
        return None
    text = dotted_name(annotation)
    return text if text is not None and text.rsplit(".", 1)[-1].lstrip("_")[:1].isupper() else None
