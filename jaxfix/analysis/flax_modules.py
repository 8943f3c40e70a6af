"""Flax module classes on the libcst tree: which attributes hold Python config (static under a
transform) and which hold data (Variables, arrays, submodules), and which `__call__` a linen
`model.apply(variables, *args)` runs. The facts (bases, Python-valued calls, `apply`) are the
tables' (`pytrees.FLAX_MODULE_BASES`, `pytrees.PYTHON_VALUE_CALLS`, `transforms.LINEN_APPLY`);
`jit_contexts` asks these functions."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator

import libcst as cst

from jaxfix.analysis import pytrees
from jaxfix.analysis.walk import statements

Qualify = Callable[[cst.BaseExpression], "str | None"]


def is_flax_module(node: cst.ClassDef, qualify: Qualify, known: Container[str]) -> bool:
    """A flax nnx or linen module class: a flax module base, or a module class `known` before it."""
    return any(
        (qualify(base.value) or "") in pytrees.FLAX_MODULE_BASES
        or (isinstance(base.value, cst.Name) and base.value.value in known)
        for base in node.bases
    )


def is_linen(node: cst.ClassDef, qualify: Qualify, linen_known: Container[str]) -> bool:
    """A linen module class: a `flax.linen` base, or a linen module class `linen_known` before it."""
    return any(
        (qualify(base.value) or "").startswith("flax.linen.")
        or (isinstance(base.value, cst.Name) and base.value.value in linen_known)
        for base in node.bases
    )


def config_attributes(node: cst.ClassDef, qualify: Qualify, linen: bool) -> tuple[set[str], set[str]]:
    """(config, data) attribute names of a flax module class. Config: a linen module's annotated
    dataclass fields, and attributes every `self.X = v` of the class sets to a value made without
    calls (a literal, a name, an attribute, arithmetic of them) or by `PYTHON_VALUE_CALLS`
    (`self.n = len(sizes)`); measured under `nnx.jit`, such an attribute arrives as the Python
    value itself. Data: what a call may make (a Variable, an array, a submodule,
    `self.param(...)`), which arrives traced."""
    config: dict[str, bool] = {}
    for stmt in node.body.body:
        if linen and isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                if isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name):
                    config[small.target.value] = True
    for name, value in _receiver_stores(node):
        plain = value is not None and python_valued(value, qualify)
        config[name] = config.get(name, True) and plain
    return {n for n, plain in config.items() if plain}, {n for n, plain in config.items() if not plain}


def variable_attributes(node: cst.ClassDef, qualify: Qualify) -> set[str]:
    """Attributes some method of the class sets to a new NNX Variable (`self.cache =
    nnx.Variable(jnp.zeros(n))`, `nnx.Param(...)`: `pytrees.NNX_VARIABLE_TYPES`) and to nothing else."""
    made: dict[str, bool] = {}
    for name, value in _receiver_stores(node):
        variable = isinstance(value, cst.Call) and qualify(value.func) in pytrees.NNX_VARIABLE_TYPES
        made[name] = made.get(name, True) and variable
    return {name for name, variable in made.items() if variable}


def _receiver_stores(node: cst.ClassDef) -> Iterator[tuple[str, cst.BaseExpression | None]]:
    """(attribute, value) for every `self.X = v` (also augmented, annotated) in the class's methods;
    value None where `X` is one target of an unpacking (`self.a, self.b = f()`)."""
    for stmt in node.body.body:
        if not isinstance(stmt, cst.FunctionDef) or not stmt.params.params:
            continue
        receiver = stmt.params.params[0].name.value
        for small in statements(stmt):
            if isinstance(small, cst.Assign):
                targets, value = [t.target for t in small.targets], small.value
            elif isinstance(small, (cst.AugAssign, cst.AnnAssign)):
                targets, value = [small.target], small.value
            else:
                continue
            for target in targets:
                if _on(target, receiver):
                    yield target.attr.value, value
                elif isinstance(target, (cst.Tuple, cst.List)):
                    for element in target.elements:
                        if _on(element.value, receiver):
                            yield element.value.attr.value, None


def _on(expr: cst.BaseExpression, receiver: str) -> bool:
    return isinstance(expr, cst.Attribute) and isinstance(expr.value, cst.Name) and expr.value.value == receiver


def python_valued(value: cst.BaseExpression, qualify: Qualify) -> bool:
    """Built without calls other than `pytrees.PYTHON_VALUE_CALLS` (nor comprehensions)."""
    found = [True]

    class _V(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> bool:
            if qualify(node.func) not in pytrees.PYTHON_VALUE_CALLS:
                found[0] = False
            return found[0]

        def visit_ListComp(self, node: cst.CSTNode) -> bool:
            found[0] = False
            return False

        visit_GeneratorExp = visit_SetComp = visit_DictComp = visit_ListComp  # type: ignore[assignment]

    value.visit(_V())
    return found[0]
