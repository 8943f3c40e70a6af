"""What an instance of a class of this file is, for `ValueKinds` (a mixin): the class a value is an
instance of (from its bindings, annotations, and the calls that pass it), the kind of an instance
(an enum member, a frozen dataclass of settings, a mutable dataclass, a pytree class), and the kinds
of its fields from their annotations.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.local_calls import nested_calls, wrapped_calls
from jaxfix.analysis.value_kind import (
    ARRAY,
    MAX_DEPTH,
    NUMBER,
    PYTREE,
    STARRED,
    STATIC,
    UNHASHABLE,
    UNKNOWN,
    UNKNOWN_KIND,
    ValueKind,
    argument_for,
)

_ENUM_BASES = frozenset({"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"})
_DATACLASS = frozenset({"dataclasses.dataclass"})


class ClassKinds:
    """The class part of `ValueKinds` (it provides `idx`, `module`, `qualify`, `pytree_names`,
    `_classes`, `annotation`, `_calls_by_name`)."""

    def _module_class(self, name: str, at: cst.CSTNode | None) -> cst.ClassDef | None:
        """The class bound once at module level that `name` names at `at` (an annotation: None)."""
        if at is not None and self.idx.resolve(name, at) is not self.module:
            return None
        stmts = self.idx.module_bindings(name)
        if len(stmts) == 1 and isinstance(stmts[0], cst.ClassDef) and name not in self.idx.global_declarations():
            return stmts[0]
        return None

    def instance_class(self, expr: cst.BaseExpression, at: cst.CSTNode, *, some: bool = False) -> str | None:
        """The name of the class of this file whose instance `expr` holds at `at`, when every binding
        (and, for a parameter, every call this file shows) says so: `model(x)` in a loss function
        whose callers pass `model = MLP(...)` runs `MLP.__call__`. With `some`, bindings whose class
        is not known are passed over: the one class the known ones name is *an* instance `expr`
        holds (`model = MLP(...)` before `model, opt = step(model, opt)` in the training loop)."""
        cls = self._instance_class(expr, at, 0, some)
        return cls.name.value if cls is not None else None

    def _instance_class(
        self, expr: cst.BaseExpression, at: cst.CSTNode, depth: int, some: bool = False
    ) -> cst.ClassDef | None:
        """The class of this file whose instance `expr` holds, when its bindings say so (`some`:
        `instance_class`)."""
        if depth > MAX_DEPTH:
            return None
        if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Name):
            return self._module_class(expr.func.value, at)
        if not isinstance(expr, cst.Name):
            return None
        scope = self.idx.resolve(expr.value, at)
        if scope is None:
            return None
        info = self.idx.scope_info(scope)
        found: set[int] = set()
        classes: list[cst.ClassDef] = []
        sources: list[tuple[cst.BaseExpression | None, cst.CSTNode]] = []
        for binding in info.bindings.get(expr.value, []):
            if isinstance(binding, cst.Assign) and not any(
                isinstance(t.target, cst.Name) and t.target.value == expr.value for t in binding.targets
            ):
                if not some:  # `model, opt = ...`: an element of the value, not the value
                    return None
            elif isinstance(binding, (cst.Assign, cst.AnnAssign)) and binding.value is not None:
                sources.append((binding.value, binding))
            elif isinstance(binding, cst.AnnAssign):
                sources.append((binding.annotation.annotation, None))
            elif not some:
                return None
        if isinstance(scope, cst.FunctionDef) and expr.value in info.params:
            param = next(
                (p for p in (*scope.params.posonly_params, *scope.params.params, *scope.params.kwonly_params) if p.name.value == expr.value),
                None,
            )
            if param is None:
                return None
            if param.annotation is not None:
                sources.append((param.annotation.annotation, None))
            else:
                passed = self._passed_values(scope, expr.value)
                if not passed:
                    return None
                sources.extend(passed)
        for value, where in sources:
            if where is None:  # an annotation naming the class
                cls = self._module_class(value.value, None) if isinstance(value, cst.Name) else None
            else:
                cls = self._instance_class(value, where, depth + 1, some)
            if cls is None:
                if some:
                    continue
                return None
            if id(cls) not in found:
                found.add(id(cls))
                classes.append(cls)
        return classes[0] if len(classes) == 1 else None

    def _passed_values(self, fdef: cst.FunctionDef, name: str) -> list[tuple[cst.BaseExpression, cst.CSTNode]]:
        """What the calls of `fdef` this file shows pass for `name`: of a module-level def, its calls
        by name; of a def nested in a function, the calls there (`local_calls`); [] when a call
        passes nothing or unpacks *args/**kwargs for it."""
        scope = self.idx.enclosing_scope(fdef)
        if isinstance(scope, cst.Module):
            calls = [*self._calls_by_name().get(fdef.name.value, []), *wrapped_calls(self.idx, self.qualify, scope, fdef)]
        else:
            calls = nested_calls(self.idx, self.qualify, fdef) or []
        positional = [p.name.value for p in (*fdef.params.posonly_params, *fdef.params.params)]
        out = []
        for call in calls:
            passed = argument_for(call, positional, name)
            if passed is None or passed is STARRED:
                return []
            out.append((passed, call))
        return out

    def holds_no_array(self, class_name: str) -> bool:
        """An instance of the class `class_name` names (bound once at module level in this file) is a
        hashable Python value and no pytree of arrays: a frozen dataclass of numbers, strings and flags,
        an enum. `eqx.filter_jit` keeps such an argument static (josephmargaryan/quantbayes@6514993
        quantbayes/stochax/energy_based/train.py:130, `float(cfg.init_scale)` of a frozen
        `PCDTrainConfig`)."""
        cls = self._module_class(class_name, None)
        return cls is not None and self.class_kind(cls).static

    def class_kind(self, cls: cst.ClassDef) -> ValueKind:
        """The kind of an instance of `cls` (a class of this file)."""
        name = cls.name.value
        key = f"{name}@{id(cls)}"
        if key in self._classes:
            return self._classes[key] or UNKNOWN_KIND
        self._classes[key] = None  # a field typed with its own class: unknown while deciding
        kind = self._class_kind(cls)
        self._classes[key] = kind
        return kind

    def _class_kind(self, cls: cst.ClassDef) -> ValueKind:
        name = cls.name.value
        bases = {self.qualify(b.value) for b in cls.bases}
        if name in self.pytree_names:
            return ValueKind(PYTREE, f"pytree class `{name}`", hashable=None)
        if bases & _ENUM_BASES:
            return ValueKind(STATIC, f"enum `{name}`", hashable=True)
        if "typing.NamedTuple" in bases:
            fields = self._fields(cls)
            if fields and all(k.kind == NUMBER for k in fields.values()):
                return ValueKind(PYTREE, f"named tuple `{name}` of numbers", hashable=True)
            if fields and all(k.static or k.kind == NUMBER for k in fields.values()):
                return ValueKind(STATIC, f"named tuple `{name}`", hashable=True)
            return ValueKind(UNKNOWN, f"named tuple `{name}`")
        options = self._dataclass_options(cls)
        if options is None:
            return ValueKind(UNKNOWN, f"instance of `{name}`")
        frozen = options.get("frozen", False)
        unsafe_hash = options.get("unsafe_hash", False)
        eq = options.get("eq", True)
        if not frozen and not unsafe_hash and eq:
            return ValueKind(UNHASHABLE, f"mutable dataclass `{name}`", hashable=False)
        if not eq:
            return ValueKind(UNKNOWN, f"dataclass `{name}` (identity hash)")
        fields = self._fields(cls)
        for field_name, kind in fields.items():
            if kind.kind in (ARRAY, PYTREE) and kind.hashable is not True or kind.kind == UNHASHABLE or kind.hashable is False:
                return ValueKind(
                    UNHASHABLE, f"{'frozen ' if frozen else ''}dataclass `{name}` with unhashable field `{field_name}`", hashable=False
                )
        label = "frozen dataclass" if frozen else "dataclass"
        return ValueKind(STATIC, f"{label} `{name}`", hashable=True)

    def _dataclass_options(self, cls: cst.ClassDef) -> dict[str, bool] | None:
        for dec in cls.decorators:
            d = dec.decorator
            func = d.func if isinstance(d, cst.Call) else d
            if self.qualify(func) not in _DATACLASS:
                continue
            options: dict[str, bool] = {}
            if isinstance(d, cst.Call):
                for arg in d.args:
                    if arg.keyword is not None and isinstance(arg.value, cst.Name) and arg.value.value in ("True", "False"):
                        options[arg.keyword.value] = arg.value.value == "True"
            return options
        return None

    def _fields(self, cls: cst.ClassDef) -> dict[str, ValueKind]:
        fields: dict[str, ValueKind] = {}
        for stmt in cls.body.body:
            if not isinstance(stmt, cst.SimpleStatementLine):
                continue
            for small in stmt.body:
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    ann = small.annotation.annotation
                    if self.qualify(ann.value if isinstance(ann, cst.Subscript) else ann) in ("typing.ClassVar", "dataclasses.InitVar"):
                        continue
                    kind = self.annotation(ann, 1)
                    if kind.kind == UNKNOWN and kind.hashable is None and not kind.callable:
                        # a type this file does not describe (a class from elsewhere): almost always
                        # a hashable config value, but not known; the field decides nothing
                        kind = ValueKind(UNKNOWN, hashable=True)
                    fields[small.target.value] = kind
        return fields

    def _field_kind(self, cls: cst.ClassDef, attr: str, depth: int) -> ValueKind:
        if self._dataclass_options(cls) is None and "typing.NamedTuple" not in {self.qualify(b.value) for b in cls.bases}:
            return UNKNOWN_KIND
        kind = self._fields(cls).get(attr)
        if kind is None or (kind.kind == UNKNOWN and not kind.callable):
            return UNKNOWN_KIND
        return kind
