"""Which attributes of a pytree or a flax module hold Python data, on the stdlib AST.

The annotations that declare Python data (`STATIC_FIELD_TYPES`, jax_dataclasses' `Static`), the
marks that make a field aux data (`STATIC_FIELD_MARKS`, `marks_static`: the libcst analysis
decides with them too), the module's own static-field helpers (`static_field_helpers`), classes
made static whole (`STATIC_CLASS_DECORATORS`), the fields a class declares static and the aux
data a hand-written `tree_flatten` returns (`static_field_names`, `tree_flatten_aux`); and what a
flax module's attributes hold (`FLAX_MODULE_BASES`, `NNX_VARIABLE_TYPES`, `PYTHON_VALUE_CALLS`).
`pytrees` re-exports these for its importers.
"""

from __future__ import annotations

import ast
from collections.abc import Container, Iterable
from typing import Callable

from jaxfix.analysis import astscan
from jaxfix.analysis.module_ast import qualify
from jaxfix.analysis.transforms import PARTIAL_NAMES

# Field annotations (by their last name) that declare Python data, not array leaves.
# Flax module classes. Their attributes are Python configuration, static under a transform, unless
# they hold data: measured under `nnx.jit` (flax 0.12), a `Variable`/`Param` attribute's value and a
# raw array attribute arrive as tracers, an `int` attribute as the int itself; a linen module's
# dataclass fields are hashable config and its parameters come from `self.param(...)` calls.
FLAX_MODULE_BASES = frozenset({"flax.nnx.Module", "flax.nnx.Object", "flax.nnx.Pytree", "flax.linen.Module"})
# NNX Variable types: `var[...] = v` on one is `Variable.__setitem__`, the NNX way to replace its
# value (flax >= 0.11; also inside `nnx.jit`), not a store into an immutable array
NNX_VARIABLE_TYPES = frozenset(
    {"flax.nnx.Variable", "flax.nnx.Param", "flax.nnx.BatchStat", "flax.nnx.Cache", "flax.nnx.Intermediate"}
)
# the accessor of a Variable's array (`self.count.value`): reads the Variable's data, not Python config
VARIABLE_VALUE_ATTRIBUTES = frozenset({"value"})
# Calls whose value stored on a module is surely Python data (everything else called may make an
# array, a Variable or a submodule, and is left traced).
PYTHON_VALUE_CALLS = frozenset(
    {"int", "float", "bool", "str", "len", "tuple", "list", "dict", "set", "frozenset", "min", "max", "abs",
     "round", "sorted", "range", "getattr", "isinstance", "divmod", "sum", "any", "all"}
)

STATIC_FIELD_TYPES = frozenset(
    {"int", "bool", "str", "Callable", "type", "Literal", "tuple", "Sequence", "Enum", "Type", "dtype", "DTypeLike"}
)


# Annotations that mark a field pytree aux data whatever the type inside: jax_dataclasses'
# `body: Static[tuple[int, ...]]` (jaxsim `ContactParameters.body`, read with `np.array`
# in jitted code: a Python tuple there, never a tracer; ami-iit/jaxsim@9893904).
STATIC_ANNOTATIONS = frozenset({"jax_dataclasses.Static", "jax_dataclasses._dataclasses.Static"})


# Annotations that name an array type, by their last name: `jax.Array`, `jnp.ndarray`,
# `"ArrayLike"`, jaxtyping's `Float[Array, "n"]` (read by both trees: `trace_sites.is_array_annotation`
# on libcst's, `ast_names_array` on the stdlib's).
ARRAY_ANNOTATIONS = ("Array", "ndarray", "ArrayLike", "Float", "Int", "Bool", "Shaped", "Num", "Real", "Complex",
                     "UInt", "Integer", "Inexact", "Key")


def names_array_type(text: str) -> bool:
    """An annotation's text (`jax.Array`, `Float`) names an array type (`ARRAY_ANNOTATIONS`)."""
    return text.rsplit(".", 1)[-1].split("[", 1)[0] in ARRAY_ANNOTATIONS


def ast_names_array(ann: ast.expr, qualify_name: Callable[[ast.expr], str | None]) -> bool:
    """A stdlib annotation names an array type: `jax.Array`, `Float[Array, "n ..."]`, `"ArrayLike"`."""
    return names_array_type(_annotated_name(ann, qualify_name))


def _annotated_name(ann: ast.expr, qualify_name: Callable[[ast.expr], str | None]) -> str:
    """The name a stdlib annotation spells, its subscript left out: qualified (`jax.Array` for
    `Array` imported from jax, `typing.Callable` of `Callable[[S], S]`), or a string annotation's
    text as written (`"Callable[[S], S]"`, whose reader drops the subscript)."""
    if type(ann) is ast.Subscript:
        ann = ann.value
    if type(ann) is ast.Constant and isinstance(ann.value, str):
        return ann.value
    return qualify_name(ann) or ""


def array_field_names(node: ast.ClassDef, bindings: dict[str, str]) -> tuple[str, ...]:
    """Fields of the class body annotated with an array type (`ts: jax.Array | None`,
    `w: Float[Array, "n"]`): traced leaves of a pytree instance."""
    return tuple(
        stmt.target.id
        for stmt in node.body
        if isinstance(stmt, ast.AnnAssign)
        and isinstance(stmt.target, ast.Name)
        and ast_names_array(_without_none(stmt.annotation), lambda n: qualify(n, bindings) or ast.unparse(n))
    )


# Annotations of a field that holds a plain function (`step: Callable[[State], State]`): read off
# an instance, it is the same function object every time, not a new bound method.
CALLABLE_ANNOTATIONS = frozenset({"Callable", "typing.Callable", "collections.abc.Callable"})


def callable_field_names(node: ast.ClassDef, bindings: dict[str, str]) -> tuple[str, ...]:
    """Fields of the class body annotated as callables and not defined as methods of it: a
    NamedTuple or dataclass of functions (aevb's `AevbEngine(init=..., step=...)`, optax's
    `GradientTransformation(init, update)`), whose `engine.step` is a stored function."""
    methods = {s.name for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    out = []
    for stmt in node.body:
        if not (isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)) or stmt.target.id in methods:
            continue
        name = _annotated_name(_without_none(stmt.annotation), lambda n: qualify(n, bindings) or ast.unparse(n))
        if name.split("[", 1)[0] in CALLABLE_ANNOTATIONS:
            out.append(stmt.target.id)
    return tuple(out)


def is_static_annotation(qualified: str | None) -> bool:
    """`qualified` (the subscripted name of an annotation, qualified) marks a static field."""
    return qualified in STATIC_ANNOTATIONS


# How a field is marked pytree aux data (static), by keyword and literal value: `eqx.field(static=True)`,
# flax's `struct.field(pytree_node=False)`, and the same keys in `dataclasses.field(metadata={...})`
# (penzai's `NamedArrayView`, flax's own `field`). The stdlib-AST readers (`ast_field_marks`) and the
# libcst analysis (`JitContexts._marked_static`) both decide with `marks_static`.
STATIC_FIELD_MARKS: dict[str, object] = {"static": True, "pytree_node": False}


def marks_static(literals: Iterable[tuple[str | None, object]]) -> bool:
    """The (keyword, literal) pairs of a field call, its `metadata` entries included, mark it static."""
    return any(k in STATIC_FIELD_MARKS and v is STATIC_FIELD_MARKS[k] for k, v in literals)


def ast_field_marks(call: ast.Call) -> list[tuple[str | None, object]]:
    """(keyword, literal) of `call`'s literal keywords and of the literal entries of its `metadata={...}`."""
    out: list[tuple[str | None, object]] = []
    for kw in call.keywords:
        if isinstance(kw.value, ast.Constant):
            out.append((kw.arg, kw.value.value))
        elif kw.arg == "metadata" and isinstance(kw.value, ast.Dict):
            out.extend(
                (k.value, v.value)
                for k, v in zip(kw.value.keys, kw.value.values)
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.Constant)
            )
        elif kw.arg == "metadata" and isinstance(kw.value, ast.Call) and isinstance(kw.value.func, ast.Name) and kw.value.func.id == "dict":
            # `metadata=dict(static=True)` (jax-llm-examples' `static_field`)
            out.extend((k.arg, k.value.value) for k in kw.value.keywords if k.arg and isinstance(k.value, ast.Constant))
    return out


def is_static_field_call(value: ast.AST | None, qualify: Callable[[ast.AST], str | None], helpers: Container[str] = ()) -> bool:
    """`value` makes a static field: a `...field(...)` call marked so (`marks_static`), or a call of
    one of the module's own `helpers` that return one (`static_field_helpers`)."""
    if not isinstance(value, ast.Call):
        return False
    if isinstance(value.func, ast.Name) and value.func.id in helpers:
        return True
    return (qualify(value.func) or "").endswith("field") and marks_static(ast_field_marks(value))


def is_static_field_partial(value: ast.AST | None, qualify: Callable[[ast.AST], str | None]) -> bool:
    """`functools.partial(flax.struct.field, pytree_node=False)`: a field function with the static
    mark bound (jaxrl_m's and ogbench's `nonpytree_field`)."""
    return (
        isinstance(value, ast.Call)
        and qualify(value.func) in PARTIAL_NAMES
        and bool(value.args)
        and (qualify(value.args[0]) or "").endswith("field")
        and marks_static(ast_field_marks(value))
    )


def static_field_helpers(
    tree: ast.Module, qualify: Callable[[ast.AST], str | None], imported: Callable[[str], bool] | None = None
) -> frozenset[str]:
    """Module-level functions that make a static field, recognised by what they do, not by name:
    every `return` gives a field call marked static (`def static_field(**kw): return
    dataclasses.field(metadata={"static": True}, **kw)`, or a module-level lambda of one), a call
    of another such helper (`imported`: whether a name the module imports is one in its own
    module, through the project index), or a `partial` of a field function with the mark bound.
    The stdlib screens and the libcst analysis (`ClassStaticFields`) both read this."""
    defs = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    named = [
        n for n in tree.body if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name)
    ]
    lambdas = {n.targets[0].id: n.value.body for n in named if isinstance(n.value, ast.Lambda)}
    found: set[str] = {n.targets[0].id for n in named if is_static_field_partial(n.value, qualify)}
    known = _HelperNames(found, imported)
    for _ in range(3):
        before = len(found)
        found.update(name for name, body in lambdas.items() if is_static_field_call(body, qualify, known))
        for name, fn in defs.items():
            returns = [r.value for r in astscan.statements(fn) if isinstance(r, ast.Return)]
            if returns and all(is_static_field_call(v, qualify, known) for v in returns):
                found.add(name)
        if len(found) == before:
            break
    return frozenset(found)


class _HelperNames:
    """The helpers found so far, and the imported names `imported` says are helpers elsewhere."""

    def __init__(self, found: set[str], imported: Callable[[str], bool] | None) -> None:
        self.found, self.imported = found, imported

    def __contains__(self, name: object) -> bool:
        return name in self.found or (self.imported is not None and isinstance(name, str) and self.imported(name))


# Decorators that make every instance of a class static (hashed into the cache key, no leaves):
# each field of such a class is Python data under any transform (jax-llm-examples' `Config`).
STATIC_CLASS_DECORATORS = frozenset({"jax.tree_util.register_static"})


def is_static_class(decorators: Iterable[str | None]) -> bool:
    """A class with one of `STATIC_CLASS_DECORATORS` (the qualified names of its decorators)."""
    return any(d in STATIC_CLASS_DECORATORS for d in decorators)


def static_field_names(node: ast.ClassDef, bindings: dict[str, str], helpers: Container[str] = ()) -> tuple[str, ...]:
    """Fields of the class body declared with a non-array annotation (`dense: bool`, `act:
    Callable`) or marked static (`eqx.field(static=True)`, `struct.field(pytree_node=False)`):
    pytree aux data or Python config, not traced leaves (the stdlib-AST twin of
    `JitContexts._class_static_fields`)."""
    out: list[str] = []
    static_class = is_static_class(qualify(d, bindings) for d in node.decorator_list)
    for stmt in node.body:
        if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
            continue
        if static_class:
            out.append(stmt.target.id)
            continue
        ann = _without_none(stmt.annotation)
        ann = ann.value if isinstance(ann, ast.Subscript) else ann
        qual = qualify(ann, bindings)
        if (qual or "").rsplit(".", 1)[-1] in STATIC_FIELD_TYPES or is_static_annotation(qual):
            out.append(stmt.target.id)
            continue
        if is_static_field_call(stmt.value, lambda n: qualify(n, bindings), helpers):
            out.append(stmt.target.id)
    out.extend(name for name in _python_members(node, out) if name not in out)
    return tuple(out)


def _python_members(node: ast.ClassDef, static: list[str]) -> list[str]:
    """Attributes of a class that hold Python data beyond its annotated fields (`static`): the
    auxiliary data `tree_flatten` returns beside the children (`return [self.geom], {"tau_a":
    self.tau_a}`: OTT's LinearProblem), and properties whose every return combines only those
    and constants (`is_balanced`: `self.tau_a == 1.0 and self.tau_b == 1.0`; not OTT's
    `is_symmetric -> bool`, which returns `jnp.all(...)`)."""
    out: list[str] = tree_flatten_aux(node)
    properties: list[ast.FunctionDef] = []
    for stmt in node.body:
        if not isinstance(stmt, ast.FunctionDef) or not stmt.args.args or stmt.name == "tree_flatten":
            continue  # the flatten method itself is no property
        if any(isinstance(d, ast.Name) and d.id == "property" for d in stmt.decorator_list):
            properties.append(stmt)
    known = set(static) | set(out)
    grew = True
    while grew:
        grew = False
        for prop in properties:
            if prop.name in known:
                continue
            receiver = prop.args.args[0].arg
            returns = [r.value for r in ast.walk(prop) if isinstance(r, ast.Return)]
            if returns and all(r is not None and _combines(r, receiver, known) for r in returns):
                known.add(prop.name)
                out.append(prop.name)
                grew = True
    return out


def flatten_methods(method_names: list[str]) -> set[str]:
    """The methods of a class that flatten it for a pytree registration: `tree_flatten`
    (`register_pytree_node_class`), and any `<x>flatten` beside its `<x>unflatten` (lenstronomy/
    JAXtronomy@565f9a1 `_tree_flatten`/`_tree_unflatten`, registered with `register_pytree_node(SIE,
    SIE._tree_flatten, SIE._tree_unflatten)`). One reading for both trees."""
    names = set(method_names)
    return {n for n in names if n == "tree_flatten" or (n.endswith("flatten") and n[: -len("flatten")] + "unflatten" in names)}


def tree_flatten_aux(node: ast.ClassDef) -> list[str]:
    """The attributes of `self` a hand-written `tree_flatten` returns as auxiliary data (`return
    [self.geom], {"tau_a": self.tau_a}`, or a local bound to such a display: `aux_data = {"NIE":
    self._nie}`): hashed into the treedef, Python values on every instance
    (`JitContexts._python_members` on the libcst tree)."""
    out: list[str] = []
    flatten = flatten_methods([s.name for s in node.body if isinstance(s, ast.FunctionDef)])
    for stmt in node.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.args.args and stmt.name in flatten:
            receiver = stmt.args.args[0].arg
            displays = {
                a.targets[0].id: a.value
                for a in ast.walk(stmt)
                if isinstance(a, ast.Assign) and len(a.targets) == 1 and isinstance(a.targets[0], ast.Name)
            }
            for ret in ast.walk(stmt):
                if isinstance(ret, ast.Return) and isinstance(ret.value, ast.Tuple) and len(ret.value.elts) == 2:
                    aux = ret.value.elts[1]
                    if isinstance(aux, ast.Name):
                        aux = displays.get(aux.id, aux)
                    parts = aux.values if isinstance(aux, ast.Dict) else aux.elts if isinstance(aux, (ast.Tuple, ast.List)) else []
                    out.extend(p.attr for p in parts if _on(p, receiver))
    return out


def _on(expr: ast.expr, receiver: str) -> bool:
    return isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) and expr.value.id == receiver


def _combines(expr: ast.expr, receiver: str, static: set[str]) -> bool:
    """`expr` is built from constants and the receiver's `static` attributes with comparisons,
    `and`/`or`/`not` and arithmetic: a Python value whatever the instance's leaves."""
    if isinstance(expr, ast.Constant):
        return True
    if _on(expr, receiver):
        return expr.attr in static
    if isinstance(expr, ast.Compare):
        return _combines(expr.left, receiver, static) and all(_combines(c, receiver, static) for c in expr.comparators)
    if isinstance(expr, ast.BoolOp):
        return all(_combines(v, receiver, static) for v in expr.values)
    if isinstance(expr, ast.UnaryOp):
        return _combines(expr.operand, receiver, static)
    if isinstance(expr, ast.BinOp):
        return _combines(expr.left, receiver, static) and _combines(expr.right, receiver, static)
    return False


def _without_none(ann: ast.expr) -> ast.expr:
    """`Sequence[int]` for `Sequence[int] | None` and `None | Sequence[int]` (one level): an
    optional field holds the same kind of value when set (gemma's `forbidden_token_ids`)."""
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        left, right = ann.left, ann.right
        if isinstance(right, ast.Constant) and right.value is None:
            return left
        if isinstance(left, ast.Constant) and left.value is None:
            return right
    return ann
