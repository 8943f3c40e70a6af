"""JAX101's rewrite of a pytree class: all its cached properties at once, in one fix.

`class_fix(ctx, cached, style)` builds the fix that every JAX101 finding of the class carries:
with `cache-style = "property"` each `cached_property` becomes a plain `property` (safe); with
`"field"` each gets a registered cache field, read by a guarded property and filled by one
`with_caches()` method in the class kind's own copy idiom (`self.replace`, `eqx.tree_at`,
`dataclasses.replace`, `tree_flatten`/`tree_unflatten`), unsafe. What the rewrite cannot do
safely becomes a manual fix that says why.
"""

from __future__ import annotations

import ast
import functools

import libcst as cst

from codemods.pytree_cache.cached_members import (
    CACHED_PROPERTY,
    CachedClass,
    CachedMember,
)
from codemods.pytree_cache.registration_edits import (
    NotAutomatic,
    add_to_data_fields,
    add_to_flatten,
    black,
    replace_in,
)
from jaxfix.analysis import astscan, filememo, render
from jaxfix.analysis import pytrees as pt
from jaxfix.analysis.codegen import pin_indent
from jaxfix.analysis.stubs import is_docstring
from jaxfix.model import Fix, ImportRequest, Safety
from jaxfix.rulebase import RuleContext

FILL_METHOD = "with_caches"

# Return annotations that mean static Python data: as a filled cache leaf it would be traced
# under jit (a shape or a branch flag would stop being concrete), strings are no valid leaf.
STATIC_RETURNS = frozenset(
    {"int", "float", "bool", "str", "bytes", "complex", "tuple", "list", "dict", "set", "frozenset"}
    | {f"typing.{n}" for n in ("Tuple", "List", "Dict", "Set", "FrozenSet", "Sequence", "Mapping", "Literal")}
)
# measured (flax 0.12.8): an nnx.Module has no registered cache field to fill; a plain attribute is
# static metadata there (an array in it goes stale, and makes `nnx.jit` raise once a second instance
# reaches the same function), so the property is the one fix
NNX_NOTE = (
    " (an `nnx.Module` keeps no cache across `nnx.jit`: read first under it, the cache holds a tracer"
    " and the next call raises `UnexpectedTracerError`; filled eagerly, the array is static metadata: it keeps its"
    " first value when the parameters change, and `nnx.jit` raises `ValueError` once another instance reaches it)"
)
STATIC_NOTE = " (its value is static Python data, which a cache leaf would turn into a tracer under jit)"

FIELD_HAZARDS = (
    "changes the tree structure (new None leaf: treedef comparisons, flax.serialization checkpoints "
    "saved before the rewrite); once filled, the cache takes the gradient and goes stale under "
    "replace/tree_map/optimizer updates"
)


def class_fix(ctx: RuleContext, cached: CachedClass, style: str, unsure: str = "") -> Fix:
    """The one fix shared by every JAX101 finding of `cached.classdef` (`style`: "field" or "property").
    `unsure` (why a cached value may be a plain Python object) makes the property fix unsafe."""
    fix = _ClassFix(ctx, cached.classdef, cached.info, cached.properties, style)
    fix.unsure = unsure
    return fix.build()


def _stmt(code: str, indent: int = 4, step: str = "    ") -> cst.BaseStatement:
    """`code` laid out by black for `indent` columns, its blocks indented by `step` (the class's)."""
    return pin_indent(cst.parse_statement(black(code, indent)), step)


def _step(block: cst.BaseSuite, module: cst.Module) -> str:
    """The indentation step of `block`: its own, else the file's default."""
    own = getattr(block, "indent", None)
    return own if own is not None else module.default_indent


def _assigned_or_deleted(tree: ast.Module, name: str) -> bool:
    return name in _written_attributes(tree)


@functools.lru_cache(maxsize=4)
def _written_attributes(tree: ast.Module) -> frozenset[str]:
    """Attribute names the module assigns or deletes (`x.a = ...`, `del x.a`, `setattr(x, "a", ...)`)."""
    found: set[str] = set()
    # `astscan.nodes`: the module's nodes listed once for the screens (`ast.walk` went through a
    # generator per node: a few % of a check of a file with thousands of pytree classes)
    for node in astscan.nodes(tree):
        if type(node) is ast.Attribute and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(node.attr)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("setattr", "delattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            found.add(node.args[1].value)
    return frozenset(found)


filememo.on_forget(_written_attributes.cache_clear)


class _ClassFix:
    """The one fix shared by every JAX101 finding of a class: all its cached properties at once."""

    def __init__(self, ctx: RuleContext, classdef: cst.ClassDef, info: pt.PytreeInfo, props: list[CachedMember], style: str):
        self.ctx, self.cls, self.info, self.props, self.style = ctx, classdef, info, props, style
        self.unsure = ""
        self.imports: list[ImportRequest] = []
        self.replace: dict[cst.CSTNode, cst.CSTNode] = {}
        top_level = ctx.is_top_level(classdef)  # column 0: no position render of the class needed
        self.indent = (0 if top_level else ctx.position(classdef).start.column) + 4

    def ref(self, qualname: str) -> str:
        spelled, imports = self.ctx.names.reference(qualname)
        self.imports.extend(imports)
        return spelled

    def build(self) -> Fix:
        try:
            self._common_checks()
            if self.info.kind == pt.NNX:
                return self._property_style(NNX_NOTE)
            if self.style == "property":
                return self._property_style()
            return self._field_style()
        except NotAutomatic as why:
            return self.ctx.manual(str(why))

    def _common_checks(self) -> None:
        names = {p.name for p in self.props}
        for stmt in self.cls.body.body:
            if isinstance(stmt, cst.FunctionDef):
                for dec in stmt.decorators:
                    d = dec.decorator
                    if (
                        isinstance(d, cst.Attribute)
                        and isinstance(d.value, cst.Name)
                        and d.value.value in names
                        and d.attr.value in ("setter", "deleter")
                    ):
                        raise NotAutomatic(
                            f"`{d.value.value}` has a {d.attr.value}; rewrite the cache by hand "
                            f"(a registered field filled by a method returning a copy)"
                        )
        for p in self.props:
            if _assigned_or_deleted(self.ctx.tree, p.name):
                raise NotAutomatic(
                    f"this module assigns or deletes `.{p.name}` (cache set or invalidated by hand), "
                    f"which a property cannot mirror; rewrite by hand"
                )

    # -- cache-style = "property" ----------------------------------------------
    def _property_style(self, note: str = "") -> Fix:
        for p in self.props:
            self.replace[p.decorator] = p.decorator.with_changes(decorator=cst.Name("property"))
        names = ", ".join(f"`{p.name}`" for p in self.props)
        if self.unsure:
            note = f"{note} (unsafe: {self.unsure}; a property re-runs the body at every read)"
        return self.ctx.rewrite(
            f"Make {names} a plain `property` (recomputed per access; no tracer is ever stored){note}",
            Safety.UNSAFE if self.unsure else Safety.SAFE,
            replace=self.replace,
        )

    # -- cache-style = "field" ------------------------------------------------
    def _field_style(self) -> Fix:
        kind = self.info.kind
        if kind == pt.REGISTERED and self.info.via not in pt.CALL_KINDS:
            raise NotAutomatic(
                f"`{self.cls.name.value}` is registered by the project's helper `{self.info.via}`, whose "
                f'flatten/unflatten this file does not show; add the cache there by hand, or use cache-style = "property"'
            )
        if kind == pt.REGISTERED:
            raise NotAutomatic(
                f"`{self.cls.name.value}` is registered with separate flatten/unflatten functions "
                f'({self.info.via}); add the cache to them by hand, or use cache-style = "property"'
            )
        static = [p for p in self.props if self._static_valued(p)]
        if len(static) == len(self.props):
            return self._property_style(STATIC_NOTE)
        for p in static:  # a leaf holding static Python data would be traced under jit: no field
            self.replace[p.func] = p.func.with_changes(
                decorators=[
                    d.with_changes(decorator=cst.Name("property")) if d is p.decorator else d for d in p.func.decorators
                ]
            )
        self.props = [p for p in self.props if p not in static]
        if not isinstance(self.cls.body, cst.IndentedBlock):
            raise NotAutomatic("one-line class body")
        members = {s.name.value for s in self.cls.body.body if isinstance(s, (cst.FunctionDef, cst.ClassDef))}
        fields = self._field_names()
        fill = next((n for n in (FILL_METHOD, "with_filled_caches", "with_jaxfix_caches") if n not in members), None)
        if fill is None:
            raise NotAutomatic("the class already defines `with_caches` and its alternatives")
        cache = {p.name: f"_{p.name}_cache" for p in self.props}
        clash = [c for c in cache.values() if c in fields or c in members]
        if clash:
            raise NotAutomatic(f"the class already has `{clash[0]}`")
        if kind in (pt.FLAX, pt.CHEX, pt.REGISTER_DATACLASS, pt.EQUINOX):
            self._check_subclasses()
        if kind == pt.EQUINOX:
            self._init_caches_in_custom_init(list(cache.values()))
        new_fields = [self._field_stmt(p, cache[p.name]) for p in self.props]
        for p in self.props:
            self.replace[p.func] = self._guarded_property(p, cache[p.name])
        if kind == pt.NODE_CLASS:
            self.replace.update(add_to_flatten(self.ctx, self.cls, list(cache.values())))
        if kind == pt.REGISTER_DATACLASS:
            self.replace.update(add_to_data_fields(self.ctx, self.cls, list(cache.values())))
        body = list(self.cls.body.body)
        anchor = self._field_anchor(body)
        fill_method = self._fill_method(fill, cache)
        fill_method = fill_method.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        new_body = []
        if anchor is None:
            new_body.extend(new_fields)
        elif not any(isinstance(small, cst.AnnAssign) for small in anchor.body):  # after the class docstring
            new_fields[0] = new_fields[0].with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        for stmt in body:
            stmt_new = self.replace.pop(stmt, stmt)
            if new_body and new_body[-1] is new_fields[-1] and isinstance(stmt_new, (cst.FunctionDef, cst.ClassDef)):
                if not stmt_new.leading_lines:  # black: a blank line before a method after a field
                    stmt_new = stmt_new.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
            new_body.append(stmt_new)
            if stmt is anchor:
                new_body.extend(new_fields)
        new_body.append(fill_method)
        new_cls = self.cls.with_changes(body=self.cls.body.with_changes(body=new_body))
        for old, new in self.replace.items():  # e.g. a `data_fields` list in a decorator
            new_cls = replace_in(new_cls, old, new)
        replace = dict(self.replace)
        replace[self.cls] = new_cls
        names = ", ".join(f"`{p.name}`" for p in self.props)
        plain = "".join(f"; `{p.name}` becomes a plain property{STATIC_NOTE}" for p in static)
        return self.ctx.rewrite(
            f"Cache {names} in registered field(s) read by a property; fill them with `{fill}()` outside jit"
            f"{plain} (unsafe: {FIELD_HAZARDS})",
            Safety.UNSAFE,
            replace=replace,
            imports=self.imports,
        )

    def _init_caches_in_custom_init(self, caches: list[str]) -> None:
        """equinox: a custom `__init__` leaves defaulted fields unset (`Missing`), so set the caches there."""
        init = next(
            (s for s in self.cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"), None
        )
        if init is None:
            bases = {b.value.value for b in self.cls.bases if isinstance(b.value, cst.Name)}
            for node in pt.ast_statements(self.ctx.tree.body):
                if isinstance(node, ast.ClassDef) and node.name in bases:
                    if any(isinstance(b, ast.FunctionDef) and b.name == "__init__" for b in node.body):
                        raise NotAutomatic(
                            f"base `{node.name}` has a custom `__init__`, which leaves a defaulted cache field "
                            f"unset in equinox; add the field and set it to None there by hand"
                        )
            return
        if not isinstance(init.body, cst.IndentedBlock) or not init.params.params:
            raise NotAutomatic("`__init__` is a one-liner or takes no `self`; set the cache fields to None by hand")
        me = init.params.params[0].name.value
        body = list(init.body.body)
        at = 1 if body and is_docstring(body[0]) else 0
        body[at:at] = [cst.parse_statement(f"{me}.{c} = None\n") for c in caches]
        self.replace[init] = init.with_changes(body=init.body.with_changes(body=body))

    def _static_valued(self, p: CachedMember) -> bool:
        """The return annotation says static Python data (int, str, tuple, ...): not a leaf to cache."""
        returns = p.func.returns
        if returns is None:
            return False
        ann = returns.annotation
        head = ann.value if isinstance(ann, cst.Subscript) else ann
        name = self.ctx.names.qualify(head)
        return name in STATIC_RETURNS

    def _field_names(self) -> set[str]:
        out = set()
        for stmt in self.cls.body.body:
            if isinstance(stmt, cst.SimpleStatementLine):
                for small in stmt.body:
                    if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                        out.add(small.target.value)
                    elif isinstance(small, cst.Assign):
                        for t in small.targets:
                            if isinstance(t.target, cst.Name):
                                out.add(t.target.value)
        return out

    def _check_subclasses(self) -> None:
        """A defaulted field breaks a subclass (in this module) that adds fields without defaults."""
        name = self.cls.name.value
        for node in pt.ast_statements(self.ctx.tree.body):
            if isinstance(node, ast.ClassDef) and any(isinstance(b, ast.Name) and b.id == name for b in node.bases):
                for stmt in node.body:
                    if isinstance(stmt, ast.AnnAssign) and stmt.value is None and isinstance(stmt.target, ast.Name):
                        raise NotAutomatic(
                            f"subclass `{node.name}` adds field `{stmt.target.id}` without a default; a defaulted "
                            f"cache field here would break its `__init__` (dataclass field order)"
                        )

    def _field_anchor(self, body: list[cst.BaseStatement]) -> cst.BaseStatement | None:
        """Insert after the last annotated field; with none, at the top (after the docstring)."""
        anchor = None
        for i, stmt in enumerate(body):
            if isinstance(stmt, cst.SimpleStatementLine):
                if any(isinstance(s, cst.AnnAssign) for s in stmt.body):
                    anchor = stmt
                elif (
                    i == 0
                    and isinstance(stmt.body[0], cst.Expr)
                    and isinstance(stmt.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
                ):
                    anchor = anchor or stmt
        return anchor

    def _field_stmt(self, p: CachedMember, cache: str) -> cst.BaseStatement:
        returns = p.func.returns
        if returns is not None:
            text = render.code_of(self.ctx.module, returns.annotation)
            qual = (
                self.ctx.names.qualify(returns.annotation.value)
                if isinstance(returns.annotation, cst.Subscript)
                else None
            )
            if qual in ("typing.Optional", "typing.Any") or text in ("Any", "typing.Any") or "None" in text:
                annotation = text  # already admits None
            else:
                annotation = f"{self.ref('typing.Optional')}[{text}]"
        else:
            annotation = self.ref("typing.Any")
        kind = self.info.kind
        if kind == pt.FLAX:
            default = f"{self.ref('flax.struct.field')}(default=None)"
        elif kind == pt.EQUINOX:
            default = f"{self.ref('equinox.field')}(default=None)"
        else:
            default = "None"
        return _stmt(f"{cache}: {annotation} = {default}\n", self.indent, _step(self.cls.body, self.ctx.module))

    def _guarded_property(self, p: CachedMember, cache: str) -> cst.FunctionDef:
        func = p.func
        if not isinstance(func.body, cst.IndentedBlock):
            raise NotAutomatic(f"`{p.name}` has a one-line body")
        params = func.params.params or func.params.posonly_params
        if not params:
            raise NotAutomatic(f"`{p.name}` takes no `self`")
        me = params[0].name.value
        guard = pin_indent(
            cst.parse_statement(f"if {me}.{cache} is not None:\n    return {me}.{cache}\n"),
            _step(func.body, self.ctx.module),
        )
        body = list(func.body.body)
        at = 0
        if (
            body
            and isinstance(body[0], cst.SimpleStatementLine)
            and isinstance(body[0].body[0], cst.Expr)
            and isinstance(body[0].body[0].value, (cst.SimpleString, cst.ConcatenatedString))
        ):
            at = 1
        body.insert(at, guard)
        decorators = [
            d.with_changes(decorator=cst.Name("property")) if d is p.decorator else d for d in func.decorators
        ]
        return func.with_changes(decorators=decorators, body=func.body.with_changes(body=body))

    def _base_fills(self, fill: str) -> bool:
        """A base class in this module has (or gets, from this rule) a `fill` method of its own."""
        bases = {b.value.value for b in self.cls.bases if isinstance(b.value, cst.Name)}
        if not bases:
            return False
        bindings = pt.module_bindings(self.ctx.tree)
        for node in pt.ast_statements(self.ctx.tree.body):
            if isinstance(node, ast.ClassDef) and node.name in bases:
                for stmt in node.body:
                    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        if stmt.name == fill:
                            return True
                        if any(pt.qualify(d, bindings) in CACHED_PROPERTY for d in stmt.decorator_list):
                            return True
        return False

    def _fill_method(self, fill: str, cache: dict[str, str]) -> cst.FunctionDef:
        kind = self.info.kind
        doc = '"""Return a copy with the caches filled; call it outside jit."""'
        # Chain to the base's own fill method, so the subclass's copy fills every cache.
        start = f"super().{fill}()" if kind != pt.NODE_CLASS and self._base_fills(fill) else "self"
        if kind == pt.FLAX:
            args = ", ".join(f"{c}=self.{n}" for n, c in cache.items())
            ret = f"return {start}.replace({args})"
        elif kind == pt.EQUINOX:
            tree_at = self.ref("equinox.tree_at")
            if len(cache) == 1:
                ((n, c),) = cache.items()
                where, values = f"lambda m: m.{c}", f"self.{n}"
            else:
                where = "lambda m: (" + ", ".join(f"m.{c}" for c in cache.values()) + ")"
                values = "(" + ", ".join(f"self.{n}" for n in cache) + ")"
            ret = f"return {tree_at}({where}, {start}, {values}, is_leaf=lambda x: x is None)"
        elif kind in (pt.CHEX, pt.REGISTER_DATACLASS):
            args = ", ".join(f"{c}=self.{n}" for n, c in cache.items())
            ret = f"return {self.ref('dataclasses.replace')}({start}, {args})"
        else:  # NODE_CLASS
            values = ", ".join(f"self.{n}" for n in cache)
            ret = (
                "children, aux_data = self.tree_flatten()\n    "
                f"return type(self).tree_unflatten(aux_data, (*children[: -{len(cache)}], {values}))"
            )
        return _stmt(f"def {fill}(self):\n    {doc}\n    {ret}\n", self.indent, _step(self.cls.body, self.ctx.module))
