"""Which fields and properties of a module's classes hold Python values even on a traced instance.

The class side of `jit_contexts.JitContexts` (its `static_fields`, `static_classes` and static
properties): flax/equinox/dataclass static-field marks, the project's own static-field helpers
(recognised by what they return, `pytrees.marks_static`), flax module config, members a class
only ever assigns Python values, and properties whose body returns static values. A mixin, so
the facts stay computed once per module on the same object; the conventions themselves live in
`pytrees` (read by the stdlib screens too).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from jaxfix.analysis import flax_modules, pytrees
from jaxfix.analysis.defaults import literal_value
from jaxfix.analysis.names import dotted_name
from jaxfix.analysis.pytree_fields import flatten_methods
from jaxfix.analysis.static_values import admits_no_array
from jaxfix.analysis.stubs import is_stub
from jaxfix.analysis.traced import analyse_function
from jaxfix.analysis.walk import statements, walk


class ClassStaticFields:
    """Mixed into `JitContexts`, which sets the attributes these methods read (`module`, `names`,
    `class_nodes`, `pytree_classes`, `flax_classes`, `linen_classes`, `flax_data`, `methods`,
    `call_oracle`, `local_field_helpers`, `field_helper`, `_field_helpers`)."""

    def _static_properties(self) -> frozenset[str]:
        """Properties of the module's pytree classes that return Python values even on a traced
        instance (`nse = property(lambda self: self.indices.shape[-2])`, a `@property` returning
        `len(self.shape)`), and fields they mark static (`training: bool =
        struct.field(pytree_node=False)`, `eqx.field(static=True)`: aux data): reading them on any
        traced object is static. Names also declared as array fields of a class of the module are
        left out."""
        out: set[str] = set()
        fields: set[str] = set()
        for cls in self.class_nodes:
            static = self.static_fields.get(cls.name.value, ())
            for stmt in cls.body.body:
                if not isinstance(stmt, cst.SimpleStatementLine):
                    continue
                for small in stmt.body:
                    if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                        if small.target.value not in static:
                            fields.add(small.target.value)
                        elif self._marked_static(small.value) or self._static_annotation(small.annotation):
                            out.add(small.target.value)  # a mark only a pytree reads: aux data
                    elif isinstance(small, cst.Assign) and cls.name.value in self.pytree_classes:
                        value = small.value
                        if not (
                            isinstance(value, cst.Call) and self.names.qualify(value.func) == "property" and value.args
                        ):
                            continue
                        getter = value.args[0].value
                        if isinstance(getter, cst.Lambda) and getter.params.params:
                            facts = analyse_function(
                                getter, self.names, {getter.params.params[0].name.value}, calls=self.call_oracle
                            )
                            if not facts.traced(getter.body):
                                out.update(t.target.value for t in small.targets if isinstance(t.target, cst.Name))
        for cls in self.class_nodes:
            if cls.name.value in self.flax_classes:
                # `model.num_layers` read on a module inside `nnx.jit`: its config is static
                out |= self.static_fields.get(cls.name.value, set())
        fields |= self.flax_data
        pending = {}
        for name, infos in self.methods.items():
            props = [m for m in infos if m.is_property and m.class_name in self.pytree_classes]
            if props and len(props) == len(infos):
                pending[name] = props
        # a property may read others (DiffeRT's `num_primitives` is `self.num_quads if
        # self.assume_quads else self.num_triangles`): decided until no more become static. One
        # may read the same name on a part (matomatical/hijax@<heldout16> solutions08/bsgpt.py:507:
        # the model's `max_context_length` is its transformer's, which is `num_inputs`, a shape):
        # the name is taken as static while its own definitions are checked, as the part is a
        # smaller object (a getter that read its own name on `self` would never return)
        grew = True
        while grew:
            grew = False
            for name, props in pending.items():
                # a stub (`@abstractmethod ... : ...`) is never what a read runs: the overrides decide
                concrete = [m for m in props if not is_stub(m.node)]
                assumed = frozenset((out | {name}) - fields)
                if name not in out and concrete and all(self._returns_static(m, assumed) for m in concrete):
                    out.add(name)
                    grew = True
        for cls in self.class_nodes:
            # the aux data a hand-written `tree_flatten` returns: Python values on any instance
            out |= self._python_members(cls)
        return frozenset(out - fields)

    def _returns_static(self, info, static_attrs: frozenset[str] = frozenset()) -> bool:
        """`info` (jit_contexts.FuncInfo, a property's getter) returns a Python value on a traced
        instance; `static_attrs`: the properties and fields already known to."""
        if not info.positional or not isinstance(info.node, cst.FunctionDef):
            return False
        facts = analyse_function(
            info.node,
            self.names,
            {info.positional[0]},
            receiver=info.positional[0],
            static_fields=self.static_fields.get(info.class_name or "", ()),
            static_attrs=static_attrs,
            calls=self.call_oracle,
        )
        returns: list[cst.Return] = []

        class R(cst.CSTVisitor):
            def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
                return node is info.node

            def visit_Lambda(self, node: cst.Lambda) -> bool:
                return False

            def visit_Return(self, node: cst.Return) -> None:
                returns.append(node)

        walk(info.node, R())
        values = [r.value for r in returns if r.value is not None]
        return bool(values) and not any(facts.traced(v, r) for r, v in zip(returns, values))

    def _is_pytree_class(self, node: cst.ClassDef) -> bool:
        """Registered as a pytree (decorator, a known pytree base, a pytree base class of this module,
        or `tree_flatten` defined): its instances can be traced `jit` arguments. Instances of other
        classes cannot cross `jit`; inside a trace they are Python objects built there."""
        qualify = self.names.qualify
        return pytrees.is_pytree_like(
            (qualify(d.decorator.func if isinstance(d.decorator, cst.Call) else d.decorator) for d in node.decorators),
            (qualify(base.value) for base in node.bases),
            (stmt.name.value for stmt in node.body.body if isinstance(stmt, cst.FunctionDef)),
        ) or any(isinstance(base.value, cst.Name) and base.value.value in self.pytree_classes for base in node.bases)

    def _static_annotation(self, annotation: cst.Annotation) -> bool:
        """`Static[...]` of jax_dataclasses (`pytrees.STATIC_ANNOTATIONS`): aux data, whatever the type."""
        ann = _without_none(annotation.annotation)
        return isinstance(ann, cst.Subscript) and pytrees.is_static_annotation(self.names.qualify(ann.value))

    def _marked_static(self, value: cst.BaseExpression | None) -> bool:
        """`struct.field(pytree_node=False, ...)`, `eqx.field(static=True, ...)`,
        `dataclasses.field(metadata={"pytree_node": False})`, or a call of one of the module's
        helpers that return such a field: pytree aux data (`pytrees.is_static_field_call` on the
        libcst tree, deciding with the same `pytrees.marks_static`)."""
        if not isinstance(value, cst.Call):
            return False
        if isinstance(value.func, cst.Name) and value.func.value in self._static_field_helpers():
            return True
        if isinstance(value.func, cst.Name) and self.field_helper is not None and self.field_helper(value.func.value):
            return True  # a helper another module of the project defines (`from utils import nonpytree_field`)
        if not (self.names.qualify(value.func) or "").endswith("field"):
            return False
        return pytrees.marks_static(_field_marks(value))

    def _static_field_helpers(self) -> frozenset[str]:
        """Module-level functions that make a static field (`pytrees.static_field_helpers`, read
        from the module's stdlib tree through `local_field_helpers`, which `jit_contexts` supplies)."""
        if self._field_helpers is None:
            self._field_helpers = self.local_field_helpers() if self.local_field_helpers is not None else frozenset()
        return self._field_helpers

    def _class_static_fields(self, node: cst.ClassDef) -> set[str]:
        """Fields declared with a non-array annotation (`depth: int`, `act: Callable`) or marked
        static (`eqx.field(static=True)`, `struct.field(pytree_node=False)`): pytree aux data or
        Python config, not traced leaves."""
        out: set[str] = set()
        static_class = pytrees.is_static_class(self.names.qualify(d.decorator) for d in node.decorators)
        if static_class:
            self.static_classes.add(node.name.value)
        for stmt in node.body.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if not isinstance(small, cst.AnnAssign) or not isinstance(small.target, cst.Name):
                    continue
                if static_class:
                    out.add(small.target.value)
                    continue
                ann = _without_none(small.annotation.annotation)
                if isinstance(ann, cst.Subscript):
                    ann = ann.value
                qual = self.names.qualify(ann) or ""
                if qual.rsplit(".", 1)[-1] in pytrees.STATIC_FIELD_TYPES or pytrees.is_static_annotation(qual):
                    out.add(small.target.value)
                    continue
                if self._marked_static(small.value):
                    out.add(small.target.value)
        return out | self._init_python_fields(node) | self._python_members(node) | self._flax_config(node)

    def _flax_config(self, node: cst.ClassDef) -> set[str]:
        """The Python config attributes of a flax module class (`flax_modules.config_attributes`),
        static under `nnx.jit`/`Module.apply`; its data attributes go to `flax_data`, so no object
        reads them as static."""
        if not flax_modules.is_flax_module(node, self.names.qualify, self.flax_classes):
            return set()
        self.flax_classes.add(node.name.value)
        linen = flax_modules.is_linen(node, self.names.qualify, self.linen_classes)
        if linen:
            self.linen_classes.add(node.name.value)
        config, data = flax_modules.config_attributes(node, self.names.qualify, linen)
        self.flax_data |= data
        return config

    def _python_members(self, node: cst.ClassDef) -> set[str]:
        """`tree_flatten`'s auxiliary data read from `self` (`pytrees._python_members` on the libcst
        tree; the module's own properties are decided from their bodies by `_static_properties`)."""
        out: set[str] = set()
        flatten = flatten_methods([s.name.value for s in node.body.body if isinstance(s, cst.FunctionDef)])
        for stmt in node.body.body:
            if not isinstance(stmt, cst.FunctionDef) or stmt.name.value not in flatten or not stmt.params.params:
                continue
            receiver = stmt.params.params[0].name.value
            displays = {
                small.targets[0].target.value: small.value
                for small in statements(stmt)
                if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
            }
            for small in statements(stmt):
                if not isinstance(small, cst.Return) or not isinstance(small.value, cst.Tuple):
                    continue
                if len(small.value.elements) != 2:
                    continue
                aux = small.value.elements[1].value
                if isinstance(aux, cst.Name):  # `aux_data = {"NIE": self._nie}` ... `return (children, aux_data)`
                    aux = displays.get(aux.value, aux)
                parts = (
                    [el.value for el in aux.elements if isinstance(el, cst.DictElement)] if isinstance(aux, cst.Dict)
                    else [el.value for el in aux.elements] if isinstance(aux, (cst.Tuple, cst.List)) else []
                )
                out.update(
                    p.attr.value for p in parts
                    if isinstance(p, cst.Attribute) and isinstance(p.value, cst.Name) and p.value.value == receiver
                )
        return out

    def _init_python_fields(self, node: cst.ClassDef) -> set[str]:
        """`self.num_stages = num_stages` in `__init__` where the parameter is annotated as admitting
        no array (`num_stages: int`), and no other `self.num_stages = ...` anywhere in the class:
        the attribute holds that Python value wherever the class's methods read it (jax's pallas
        `Scheduler` loops `for _ in range(self.num_stages - 1)` under a trace)."""
        from_params: dict[str, bool] = {}  # attribute -> assigned only from a Python-valued parameter
        for stmt in node.body.body:
            if not isinstance(stmt, cst.FunctionDef):
                continue
            params = [*stmt.params.posonly_params, *stmt.params.params]
            if not params:
                continue
            receiver = params[0].name.value
            python = {
                p.name.value
                for p in (*params, *stmt.params.kwonly_params)
                if p.annotation is not None and admits_no_array(p.annotation.annotation, self.names.qualify)
            } if stmt.name.value == "__init__" else set()
            for small in statements(stmt):
                if isinstance(small, cst.Assign):
                    targets = [target.target for target in small.targets]
                    plain = isinstance(small.value, cst.Name) and small.value.value in python
                elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                    targets, plain = [small.target], False
                else:
                    continue
                while targets:
                    t = targets.pop()
                    if isinstance(t, (cst.Tuple, cst.List)):  # `self.a, self.b = ...`: never plain
                        targets.extend(el.value for el in t.elements)
                        plain = False
                    elif isinstance(t, cst.StarredElement):
                        targets.append(t.value)
                    elif isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == receiver:
                        from_params[t.attr.value] = from_params.get(t.attr.value, True) and plain
        return {attr for attr, plain in from_params.items() if plain}


def _field_marks(call: cst.Call) -> list[tuple[str | None, object]]:
    """(keyword, literal) of a field call's `True`/`False`/`None`/number/string keywords and of the
    literal entries of its `metadata={...}` (`pytrees.ast_field_marks` on the libcst tree)."""

    out: list[tuple[str | None, object]] = []
    for arg in call.args:
        if arg.keyword is None:
            continue
        if arg.keyword.value == "metadata" and isinstance(arg.value, cst.Dict):
            for el in arg.value.elements:
                if isinstance(el, cst.DictElement) and isinstance(key := literal_value(el.key), str):
                    out.append((key, literal_value(el.value)))
        elif arg.keyword.value == "metadata" and isinstance(arg.value, cst.Call) and dotted_name(arg.value.func) == "dict":
            out.extend((a.keyword.value, literal_value(a.value)) for a in arg.value.args if a.keyword is not None)
        else:
            out.append((arg.keyword.value, literal_value(arg.value)))
    return out


def _without_none(ann: cst.BaseExpression) -> cst.BaseExpression:
    """`Sequence[int]` for `Sequence[int] | None` (`pytrees._without_none` on the libcst tree)."""
    if isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr):
        if isinstance(ann.right, cst.Name) and ann.right.value == "None":
            return ann.left
        if isinstance(ann.left, cst.Name) and ann.left.value == "None":
            return ann.right
    return ann


# Base classes whose instance attributes hold nothing a subclass does not declare: `object`, the
# typing and abc bases, and the pytree/module bases of jax, flax and equinox (`pytrees`).
_BASES_IN_SIGHT = frozenset(
    {"object", "abc.ABC", "typing.Generic", "typing.Protocol", "typing.NamedTuple", "NamedTuple"}
) | frozenset(pytrees.PYTREE_BASES)


class ShownAttributes:
    """Mixed into `JitContexts` beside `ClassStaticFields` (reads `class_nodes`, `names`, and keeps
    its answers in `_shown_attributes`: the proof asks once per method and evidence path)."""

    def shown_attributes(self, class_name: str | None) -> frozenset[str] | None:
        if class_name not in self._shown_attributes:
            self._shown_attributes[class_name] = self._find_shown_attributes(class_name)
        return self._shown_attributes[class_name]

    def _find_shown_attributes(self, class_name: str | None) -> frozenset[str] | None:
        """The attributes of `class_name`'s instances this module shows (the fields, class-level
        names, methods and `self.x = ...` stores of the class and of its bases defined here), when
        some base is out of sight (a project class of another module, a library class); None when
        every base is in sight (`_BASES_IN_SIGHT`), or the class is not one of the module's. An
        attribute only such a base declares may be its static field: ASKabalan/jax-fli@659abc6
        fields/particles.py reads `self.unit`, an `eqx.field(static=True)` of `AbstractField` in
        `_src/base/_core.py` (heldout15: 5 wrong JAX301 there, two of them with safe fixes that broke)."""
        by_name: dict[str, list[cst.ClassDef]] = {}
        for node in self.class_nodes:
            by_name.setdefault(node.name.value, []).append(node)
        if class_name is None or len(by_name.get(class_name, ())) != 1:
            return None
        shown: set[str] = set()
        complete = True
        todo, seen = [by_name[class_name][0]], set()
        while todo:
            cls = todo.pop()
            if id(cls) in seen:
                continue
            seen.add(id(cls))
            shown |= _declared_attributes(cls)
            for base in cls.bases:
                if base.keyword is not None:
                    continue  # `metaclass=...`
                expr = base.value.value if isinstance(base.value, cst.Subscript) else base.value
                local = by_name.get(expr.value, []) if isinstance(expr, cst.Name) else []
                if len(local) == 1:
                    todo.append(local[0])
                elif (self.names.qualify(expr) or dotted_name(expr)) not in _BASES_IN_SIGHT:
                    complete = False
        return None if complete else frozenset(shown)


def _declared_attributes(cls: cst.ClassDef) -> set[str]:
    """Names the class body binds (fields, class-level assignments, methods) and the attributes its
    methods store on their first parameter (`self.x = ...`, `self.x: T = ...`, `self.x += ...`)."""
    out: set[str] = set()
    for stmt in cls.body.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            out.add(stmt.name.value)
        if isinstance(stmt, cst.SimpleStatementLine):
            out.update(t.value for small in stmt.body for t in _store_targets(small, unpack=False) if isinstance(t, cst.Name))
    return out | instance_attributes(cls)


def instance_attributes(cls: cst.ClassDef, methods: Callable[[str], bool] = lambda name: True) -> set[str]:
    """The attributes the class's methods (those whose name `methods` accepts) store on their first
    parameter (`self.x = ...`, `self.x: T = ...`, `self.x += ...`)."""
    out: set[str] = set()
    for method in cls.body.body:
        params = [*method.params.posonly_params, *method.params.params] if isinstance(method, cst.FunctionDef) else []
        if not params or not methods(method.name.value):
            continue
        receiver = params[0].name.value
        for small in statements(method):
            for t in _store_targets(small):
                if isinstance(t, cst.Attribute) and isinstance(t.value, cst.Name) and t.value.value == receiver:
                    out.add(t.attr.value)
    return out


def _store_targets(small: cst.CSTNode, unpack: bool = True) -> list[cst.BaseExpression]:
    """What an assignment statement stores into, tuple and list targets unpacked (`self.a, self.b = ...`)
    unless `unpack` is False."""
    if isinstance(small, cst.Assign):
        todo = [t.target for t in small.targets]
    elif isinstance(small, (cst.AnnAssign, cst.AugAssign)):
        todo = [small.target]
    else:
        return []
    out: list[cst.BaseExpression] = []
    while todo:
        t = todo.pop()
        if unpack and isinstance(t, (cst.Tuple, cst.List)):
            todo.extend(el.value for el in t.elements)
        else:
            out.append(t)
    return out
