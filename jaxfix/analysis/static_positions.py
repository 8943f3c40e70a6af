"""Where a value must be a concrete Python value under a trace, and what kind of value a name holds.

`static_uses(body, names, qualify)`: which of `names` the code uses as a shape, loop
bound, slice bound, branch flag, axis, conversion (`int(n)`) or callee - the
positions where a traced value fails (research section 1.3: TracerBoolConversionError,
TracerIntegerConversionError, the shape TypeError, the slice IndexError). A name
read only through `.shape`/`.ndim`/`.dtype`/`.size` or `len()` is not a static use:
those are static even for tracers.

`value_kind(name, scope_info, ...)`: a conservative guess from how a local is bound:
"hashable" (int/str/bool/None literals, `range` loop targets, `len()`, `.shape`),
"unhashable" (list/dict/set literals and comprehensions, array constructors),
"function" (a local def or lambda: hashable by identity), or "unknown".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import libcst as cst

from jaxfix.analysis.static_values import STATIC_ATTRS
from jaxfix.analysis.walk import Visitor, walk

Qualify = Callable[[cst.BaseExpression], "str | None"]

# jax.numpy constructors whose every argument is static
_ALL_STATIC = frozenset(
    f"jax.numpy.{n}"
    for n in ("zeros", "ones", "empty", "eye", "identity", "arange", "tri", "tril_indices", "triu_indices")
)
# (qualified name or method name) -> positional indexes that are static (None: all but the first)
_STATIC_POSITIONAL: dict[str, tuple[int, ...] | None] = {
    "jax.numpy.full": (0,),
    "jax.numpy.linspace": (2,),
    "jax.numpy.reshape": None,
    "jax.numpy.broadcast_to": (1,),
    "jax.numpy.tile": (1,),
    "jax.numpy.repeat": (1,),
    "jax.numpy.pad": (1,),
    "jax.numpy.split": (1,),
    "jax.numpy.transpose": (1,),
    "jax.numpy.expand_dims": (1,),
    "jax.numpy.squeeze": (1,),
    "jax.numpy.sum": (1,),
    "jax.numpy.mean": (1,),
    "jax.numpy.max": (1,),
    "jax.numpy.min": (1,),
    "jax.numpy.prod": (1,),
    "jax.numpy.argmax": (1,),
    "jax.numpy.argmin": (1,),
    "jax.numpy.cumsum": (1,),
    "jax.numpy.concatenate": (1,),
    "jax.numpy.stack": (1,),
    "jax.lax.dynamic_slice": (2,),
    "jax.nn.one_hot": (1,),
}
_STATIC_METHODS = frozenset(
    {
        "reshape",
        "transpose",
        "squeeze",
        "sum",
        "mean",
        "max",
        "min",
        "prod",
        "argmax",
        "argmin",
        "cumsum",
        "repeat",
        "swapaxes",
    }
)
_STATIC_KEYWORDS = frozenset(
    {
        "shape",
        "num",
        "axis",
        "axes",
        "length",
        "size",
        "repeats",
        "reps",
        "newshape",
        "new_sizes",
        "dtype",
        "k",
        "num_classes",
        "slice_sizes",
        "unroll",
        "ord",
        "keepdims",
    }
)
_STATIC_BUILTINS = frozenset({"range", "int", "float", "bool", "str", "complex", "hash"})
ARRAY_METHODS = frozenset(
    {
        "sum",
        "mean",
        "max",
        "min",
        "prod",
        "reshape",
        "astype",
        "transpose",
        "squeeze",
        "ravel",
        "flatten",
        "dot",
        "clip",
        "round",
        "any",
        "all",
        "argmax",
        "argmin",
        "cumsum",
        "std",
        "var",
        "conj",
        "swapaxes",
        "repeat",
        "take",
        "block_until_ready",
        "item",
        "tolist",
        "copy",
        "sort",
        "argsort",
        "nonzero",
    }
)


def static_uses(
    body: cst.CSTNode, names: Iterable[str], qualify: Qualify, skip: cst.CSTNode | None = None
) -> dict[str, str]:
    """{name: why} for each of `names` used in a static position anywhere under `body`, except
    under `skip` (the statement a fix rewrites)."""
    finder = _StaticFinder(set(names), qualify, skip)
    walk(body, finder)
    return finder.found


class _StaticFinder(Visitor):  # `Visitor`: its `on_visit` override calls the cached dispatch, not libcst's
    tokens_unseen = True  # `walk` leaves tokens out: no handler is a token's, and `skip` is a statement

    def __init__(self, names: set[str], qualify: Qualify, skip: cst.CSTNode | None = None) -> None:
        super().__init__()
        self.names = names
        self.qualify = qualify
        self.skip = skip
        self.found: dict[str, str] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node is self.skip:
            return False
        return super().on_visit(node)

    def _mark(self, node: cst.CSTNode | None, why: str) -> None:
        if node is None:
            return
        collector = _NameCollector(self.names)
        walk(node, collector)
        for name in collector.found:
            self.found.setdefault(name, why)

    def visit_If(self, node: cst.If) -> None:
        self._mark(node.test, "branch condition")

    def visit_While(self, node: cst.While) -> None:
        self._mark(node.test, "loop condition")

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._mark(node.test, "branch condition")

    def visit_Assert(self, node: cst.Assert) -> None:
        self._mark(node.test, "assert condition")

    def visit_CompIf(self, node: cst.CompIf) -> None:
        self._mark(node.test, "comprehension condition")

    def visit_Slice(self, node: cst.Slice) -> None:
        for part in (node.lower, node.upper, node.step):
            self._mark(part, "slice bound")

    def visit_Call(self, node: cst.Call) -> None:
        func = node.func
        if isinstance(func, cst.Name) and func.value in self.names:
            self.found.setdefault(func.value, "callee")
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value in self.names:
            if func.attr.value not in ARRAY_METHODS:
                self.found.setdefault(func.value.value, f"object with method .{func.attr.value}()")
        name = self.qualify(func)
        positional = [a for a in node.args if a.keyword is None and not a.star]
        for arg in node.args:
            if arg.keyword is not None and arg.keyword.value in _STATIC_KEYWORDS:
                self._mark(arg.value, f"{arg.keyword.value}= argument")
        if name in _STATIC_BUILTINS:
            for arg in positional:
                self._mark(arg.value, f"argument of {name}()")
            return
        if name in _ALL_STATIC:
            for arg in positional:
                self._mark(arg.value, f"shape argument of {name.rsplit('.', 1)[-1]}()")
            return
        if name is not None and name.startswith("jax.random."):
            if len(positional) > 1:
                self._mark(positional[1].value, "shape argument of a jax.random sampler")
            return
        index: tuple[int, ...] | None | str = _STATIC_POSITIONAL.get(name or "", "none")
        if index == "none" and isinstance(func, cst.Attribute) and func.attr.value in _STATIC_METHODS:
            for arg in positional:
                self._mark(arg.value, f"argument of .{func.attr.value}()")
            return
        if index == "none":
            return
        for i, arg in enumerate(positional):
            if (index is None and i > 0) or (isinstance(index, tuple) and i in index):
                self._mark(arg.value, f"static argument of {name.rsplit('.', 1)[-1]}()")


class _NameCollector(cst.CSTVisitor):
    """Names among `names` read in an expression, except through .shape/.ndim/... or len()."""

    def __init__(self, names: set[str]) -> None:
        super().__init__()
        self.names = names
        self.found: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        if node.value in self.names:
            self.found.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        if node.attr.value in STATIC_ATTRS:
            return False
        walk(node.value, self)
        return False

    def visit_Call(self, node: cst.Call) -> bool:
        if isinstance(node.func, cst.Name) and node.func.value == "len":
            return False
        return True

    def visit_Arg(self, node: cst.Arg) -> bool:
        walk(node.value, self)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return True


_HASHABLE_CALLS = frozenset(
    {"len", "int", "str", "bool", "hash", "range", "tuple", "frozenset", "round", "min", "max", "abs"}
)
_UNHASHABLE_CALLS = frozenset({"list", "dict", "set", "bytearray"})


def expression_kind(expr: cst.BaseExpression | None, qualify: Qualify) -> str:
    """ "hashable" | "unhashable" | "function" | "number" | "unknown" for an expression's value."""
    if expr is None:
        return "unknown"
    if isinstance(expr, (cst.Integer, cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return "hashable"
    if isinstance(expr, (cst.Float, cst.Imaginary)):
        return "number"
    if isinstance(expr, cst.Name) and expr.value in ("True", "False", "None"):
        return "hashable"
    if isinstance(expr, cst.Tuple):
        kinds = {expression_kind(e.value, qualify) for e in expr.elements}
        return "hashable" if kinds <= {"hashable", "number"} else ("unhashable" if "unhashable" in kinds else "unknown")
    if isinstance(expr, (cst.List, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp)):
        return "unhashable"
    if isinstance(expr, cst.Lambda):
        return "function"
    if isinstance(expr, cst.Attribute) and expr.attr.value in ("ndim", "size", "dtype", "shape"):
        return "hashable"
    if isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape":
        return "hashable"
    if isinstance(expr, cst.Comparison) or (
        isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not)
    ):
        return "unknown"
    if isinstance(expr, cst.BinaryOperation):
        left, right = expression_kind(expr.left, qualify), expression_kind(expr.right, qualify)
        if left == right == "hashable":
            return "hashable"
        return "unknown"
    if isinstance(expr, cst.Call):
        name = qualify(expr.func)
        if name in _HASHABLE_CALLS:
            return "hashable"
        if name in _UNHASHABLE_CALLS:
            return "unhashable"
        if name is not None and (
            name.startswith("jax.numpy.") or name.startswith("numpy.") or name.startswith("jax.random.")
        ):
            return "unhashable"  # arrays: fine as traced arguments, never as static ones
    return "unknown"


def binding_kind(binding: cst.CSTNode, name: str, qualify: Qualify) -> str:
    """What a single binding statement gives `name` (see `expression_kind`)."""
    if isinstance(binding, cst.FunctionDef):
        return "function"
    if isinstance(binding, cst.For):
        if isinstance(binding.target, cst.Name):
            iterable = binding.iter
            if isinstance(iterable, cst.Call) and qualify(iterable.func) == "range":
                return "hashable"
            if isinstance(iterable, (cst.Tuple, cst.List, cst.Set)):
                kinds = {expression_kind(e.value, qualify) for e in iterable.elements}
                if kinds <= {"hashable"}:
                    return "hashable"
                if kinds <= {"hashable", "number"}:
                    return "number"
        return "unknown"
    if isinstance(binding, cst.Assign):
        if len(binding.targets) == 1 and isinstance(binding.targets[0].target, cst.Name):
            return expression_kind(binding.value, qualify)
        return "unknown"
    if isinstance(binding, cst.AnnAssign):
        return expression_kind(binding.value, qualify)
    if isinstance(binding, cst.AugAssign):
        return (
            expression_kind(binding.value, qualify)
            if expression_kind(binding.value, qualify) == "hashable"
            else "unknown"
        )
    return "unknown"


def param_kind(param: cst.Param, qualify: Qualify) -> str:
    ann = param.annotation.annotation if param.annotation is not None else None
    if isinstance(ann, cst.Name) and ann.value in ("int", "str", "bool"):
        return "hashable"
    if isinstance(ann, cst.Name) and ann.value == "float":
        return "number"
    if isinstance(ann, cst.Subscript) and isinstance(ann.value, cst.Name) and ann.value.value in ("tuple", "Tuple"):
        return "hashable"
    if isinstance(ann, cst.Name) and ann.value in ("list", "dict", "set"):
        return "unhashable"
    return "unknown"


def combine(kinds: Iterable[str]) -> str:
    kinds = set(kinds)
    if not kinds:
        return "unknown"
    if "unhashable" in kinds:
        return "unhashable"
    if len(kinds) == 1:
        return kinds.pop()
    if kinds <= {"hashable", "number"}:
        return "number"
    return "unknown"


NUMERIC_MODULES = ("jax.numpy.", "jax.lax.", "jax.nn.", "jax.scipy.", "jax.random.", "numpy.", "math.", "optax.")


def uses_of(body: cst.CSTNode, name: str, qualify: Qualify) -> list[tuple[str, cst.CSTNode]]:
    """How `name` is used under `body`: ("numeric", node) for an operand of an operator, an argument
    of a jax.numpy/lax/... function, a subscript base or an array method/attribute; ("call", Call)
    with the call when it is an argument of another function (the caller may look inside);
    ("other", node) otherwise."""
    finder = _UseFinder(name, qualify)
    walk(body, finder)
    return finder.uses


class _UseFinder(cst.CSTVisitor):
    def __init__(self, name: str, qualify: Qualify) -> None:
        super().__init__()
        self.name = name
        self.qualify = qualify
        self.uses: list[tuple[str, cst.CSTNode]] = []
        self._parents: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Name) and node.value == self.name and self._parents:
            self.uses.append(self._classify(node))
        if isinstance(node, cst.Attribute):
            # only the value of an attribute is a read; `.attr` is not
            self._parents.append(node)
            walk(node.value, self)
            self._parents.pop()
            return False
        self._parents.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if self._parents and self._parents[-1] is original_node:
            self._parents.pop()

    def _classify(self, node: cst.Name) -> tuple[str, cst.CSTNode]:
        parent = self._parents[-1]
        if isinstance(parent, (cst.BinaryOperation, cst.UnaryOperation, cst.Comparison, cst.ComparisonTarget)):
            return "numeric", parent
        if isinstance(parent, cst.Subscript) and parent.value is node:
            if any(
                isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.SimpleString, cst.ConcatenatedString))
                for e in parent.slice
            ):
                return "other", parent  # `opts["scale"]`: a mapping, which may hold anything
            return "numeric", parent
        if isinstance(parent, cst.Attribute):
            if parent.attr.value in STATIC_ATTRS | ARRAY_METHODS | {"T", "at", "real", "imag", "mT"}:
                return "numeric", parent
            return "other", parent
        if isinstance(parent, cst.Arg) and len(self._parents) > 1 and isinstance(self._parents[-2], cst.Call):
            call = self._parents[-2]
            qual = self.qualify(call.func) or ""
            if qual.startswith(NUMERIC_MODULES) or (
                isinstance(call.func, cst.Attribute) and call.func.attr.value in ARRAY_METHODS
            ):
                return "numeric", call
            return "call", call
        if isinstance(parent, (cst.Element, cst.List, cst.Tuple)):
            return "numeric", parent  # inside a list/tuple literal, e.g. jnp.concatenate([v, w])
        if isinstance(parent, cst.Return) or isinstance(parent, cst.Lambda):
            return "numeric", parent
        return "other", parent
