"""What kind of Python value a name or expression holds, as far as this file shows.

The jit-placement fixes move a value a callable captured into an argument of a hoisted jitted
function, or leave it captured; which is right depends on what the value is (research section
3b): an array or a Python number can be a traced argument; a hashable non-array value (a
string, a bool flag, a tuple of ints, an enum member, a frozen dataclass of such fields, a
function defined at module level) can only be a static argument or stay captured; a function
made anew on every call or iteration (a nested `def`, a `lambda`, a `functools.partial(...)`,
`jax.grad(...)` of one) is neither: as a static argument it is a new cache key every time; a
non-array value that is not hashable (a dict of settings, a list, a mutable dataclass) can be
neither traced nor static.

`ValueKinds.of(ctx)` (one per file, `ctx.fact`) answers `of_name(name, at)` and
`of_expr(expr, at)` with a `ValueKind`: the kind, a few words for messages ("frozen dataclass
`Config`"), whether the value is hashable (None: not known) and whether it is a callable. It
decides from literals, constructors of this file's classes (dataclasses, enums, named tuples,
pytree classes), parameter annotations and defaults, and the values passed at the call sites
of a module-level function in this file. What it cannot tell is UNKNOWN, never a guess.

The kinds themselves are `value_kind`'s records; what an instance of a class of this file is lives
in `value_classes` (a mixin of `ValueKinds`).
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.local_calls import calls_by_name
from jaxfix.analysis.pytrees import pytree_classes
from jaxfix.analysis.scopes import ScopeIndex, param_names
from jaxfix.analysis.value_classes import ClassKinds
from jaxfix.analysis.value_kind import (  # the kinds: importers read them from here too
    ARRAY,
    ARRAY_VALUE,
    BOOL_VALUE,
    FRESH,
    MAX_DEPTH,
    NONE_VALUE,
    NUMBER,
    NUMBER_VALUE,
    PYTREE,
    STARRED,
    STATIC,
    STRING_VALUE,
    TRACEABLE,
    UNHASHABLE,
    UNKNOWN,
    UNKNOWN_KIND,
    ValueKind,
    argument_for,
    combine,
)

__all__ = [
    "ARRAY",
    "FRESH",
    "NUMBER",
    "PYTREE",
    "STARRED",
    "STATIC",
    "TRACEABLE",
    "UNHASHABLE",
    "UNKNOWN",
    "UNKNOWN_KIND",
    "ValueKind",
    "ValueKinds",
    "argument_for",
    "combine",
]

_ARRAY_MODULES = ("jax.numpy.", "numpy.", "jax.random.", "jax.nn.", "jax.lax.", "jax.scipy.")
_NOT_ARRAYS = frozenset(
    {"numpy.dtype", "jax.numpy.dtype", "numpy.random.default_rng", "jax.random.key_data", "numpy.errstate"}
)
_ARRAY_TYPES = frozenset(
    {
        "jax.Array",
        "jax.numpy.ndarray",
        "jax.numpy.DeviceArray",
        "numpy.ndarray",
        "jax.typing.ArrayLike",
        "chex.Array",
        "chex.ArrayDevice",
        "chex.PRNGKey",
        "jaxtyping.Array",
        "jaxtyping.PRNGKeyArray",
        "jax.random.PRNGKey",
    }
)
_JAXTYPING_DTYPES = frozenset(
    {"Float", "Int", "Bool", "Complex", "Shaped", "Num", "Inexact", "Integer", "UInt", "Real", "Key", "Float32", "Int32"}
)
_NUMBER_TYPES = frozenset({"int", "float", "complex", "numbers.Number", "numbers.Real"})
_STATIC_TYPES = {
    "str": STRING_VALUE,
    "bytes": ValueKind(STATIC, "bytes", hashable=True),
    "bool": BOOL_VALUE,
    "None": NONE_VALUE,
    "frozenset": ValueKind(STATIC, "frozenset", hashable=True),
    "typing.Literal": ValueKind(STATIC, "literal", hashable=True),
}
_CONTAINER_TYPES = frozenset(
    {
        "list",
        "dict",
        "set",
        "typing.List",
        "typing.Dict",
        "typing.Set",
        "typing.Sequence",
        "typing.Mapping",
        "typing.MutableMapping",
        "collections.abc.Sequence",
        "collections.abc.Mapping",
        "collections.abc.MutableMapping",
    }
)
_CALLABLE_TYPES = frozenset({"typing.Callable", "collections.abc.Callable", "Callable"})
_TUPLE_TYPES = frozenset({"tuple", "typing.Tuple"})
_OPTIONAL_TYPES = frozenset({"typing.Optional"})
# calls whose result is a new function object on every call (a fresh cache key for jit)
FRESH_CALLS = frozenset(
    {
        "functools.partial",
        "jax.jit",
        "jax.grad",
        "jax.value_and_grad",
        "jax.vmap",
        "jax.pmap",
        "jax.jacfwd",
        "jax.jacrev",
        "jax.hessian",
        "jax.checkpoint",
        "jax.remat",
        "jax.custom_jvp",
        "jax.custom_vjp",
        "equinox.filter_jit",
        "equinox.filter_grad",
        "equinox.filter_value_and_grad",
        "equinox.filter_vmap",
        "equinox.filter_pmap",
        "equinox.Partial",
        "jax.tree_util.Partial",
    }
)
_NUMBER_CALLS = frozenset({"len", "int", "float", "round", "abs", "complex", "math.prod", "math.sqrt", "math.log"})
_STATIC_CALLS = {"str": STRING_VALUE, "bool": BOOL_VALUE, "frozenset": ValueKind(STATIC, "frozenset", hashable=True)}
_UNHASHABLE_CALLS = frozenset({"list", "dict", "set", "bytearray", "collections.OrderedDict", "collections.defaultdict"})


class ValueKinds(ClassKinds):
    """Kinds of values in one module (see the module docstring)."""

    def __init__(self, module: cst.Module, idx: ScopeIndex, qualify, pytree_names: set[str]) -> None:
        self.module = module
        self.idx = idx
        self.qualify = qualify
        self.pytree_names = pytree_names
        self._classes: dict[str, ValueKind | None] = {}
        self._calls: dict[str, list[cst.Call]] | None = None
        self._active: set[tuple[str, int]] = set()

    @classmethod
    def of(cls, ctx) -> "ValueKinds":
        idx = ctx.fact(ScopeIndex, ScopeIndex.of)
        # the names of the pytree classes only when the fact is made: a set of them per call was
        # quadratic in a file of many pytree classes (one call per rule's question)
        return ctx.fact(ValueKinds, lambda c: cls(c.module, idx, c.names.qualify, {name for name, _ in pytree_classes(c)}))

    # -- names -----------------------------------------------------------------------------
    def of_name(self, name: str, at: cst.CSTNode, depth: int = 0) -> ValueKind:
        """The kind of the value `name` holds where it is read at `at` (all its bindings in the scope
        it resolves to: a name bound twice is either)."""
        if name in ("True", "False"):
            return BOOL_VALUE
        if name == "None":
            return NONE_VALUE
        scope = self.idx.resolve(name, at)
        if scope is None or depth > MAX_DEPTH:
            return UNKNOWN_KIND
        key = (name, id(scope))
        if key in self._active:
            return UNKNOWN_KIND  # a value defined through itself (x = x + 1): its other bindings decide
        self._active.add(key)
        try:
            return self._of_name(name, scope, depth)
        finally:
            self._active.discard(key)

    def _of_name(self, name: str, scope: cst.CSTNode, depth: int) -> ValueKind:
        info = self.idx.scope_info(scope)
        kinds = [self._binding(b, name, scope, depth) for b in info.bindings.get(name, [])]
        if isinstance(scope, cst.FunctionDef) and name in info.params:
            kinds.append(self._param(scope, name, depth))
        elif isinstance(scope, cst.Lambda) and name in info.params:
            kinds.append(UNKNOWN_KIND)
        if any(k.kind == UNKNOWN and k.hashable is None and not k.callable for k in kinds):
            return UNKNOWN_KIND  # one binding of unknown kind: the name may hold anything
        return combine(kinds)

    def _binding(self, binding: cst.CSTNode, name: str, scope: cst.CSTNode, depth: int) -> ValueKind:
        if isinstance(binding, cst.FunctionDef):
            if isinstance(scope, cst.Module):
                return ValueKind(STATIC, f"module-level function `{name}`", hashable=True, callable=True)
            return ValueKind(FRESH, f"function `{name}` defined in `{_scope_name(scope)}`", hashable=True, callable=True)
        if isinstance(binding, cst.ClassDef):
            return ValueKind(STATIC, f"class `{name}`", hashable=True, callable=True)
        if isinstance(binding, (cst.For, cst.CompFor)):
            if isinstance(binding.target, cst.Name):
                return self.element_of(binding.iter, binding, depth + 1)
            return UNKNOWN_KIND
        if isinstance(binding, cst.Assign):
            if len(binding.targets) == 1 and isinstance(binding.targets[0].target, cst.Name):
                return self.of_expr(binding.value, binding, depth + 1)
            if isinstance(binding.value, cst.Attribute) and binding.value.attr.value == "shape":
                return NUMBER_VALUE  # `n, m = x.shape`: each one an int
            return UNKNOWN_KIND
        if isinstance(binding, cst.AnnAssign):
            ann = self.annotation(binding.annotation.annotation, depth + 1)
            if binding.value is None:
                return ann
            value = self.of_expr(binding.value, binding, depth + 1)
            return value if value.kind != UNKNOWN else ann
        if isinstance(binding, cst.AugAssign):
            value = self.of_expr(binding.value, binding, depth + 1)
            if value.kind in (NUMBER, ARRAY):
                return value  # the other bindings decide the rest (x = 0; x += arr -> array)
            if value.kind == STATIC and value.what == "string":
                return value
            return UNKNOWN_KIND
        return UNKNOWN_KIND

    def element_of(self, iterable: cst.BaseExpression, at: cst.CSTNode, depth: int = 0) -> ValueKind:
        """The kind of the elements a `for` over `iterable` binds."""
        if isinstance(iterable, cst.Call) and self.qualify(iterable.func) == "range":
            return NUMBER_VALUE
        if isinstance(iterable, (cst.Tuple, cst.List, cst.Set)):
            return combine(self.of_expr(e.value, at, depth) for e in iterable.elements if not isinstance(e, cst.StarredElement))
        if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Attribute):
            if iterable.func.attr.value in ("keys",) and not iterable.args:
                return UNKNOWN_KIND
        if isinstance(iterable, cst.Name) and depth <= MAX_DEPTH:
            literal = self._literal_binding(iterable.value, at)
            if literal is not None:
                return self.element_of(literal, literal, depth + 1)
        if depth <= MAX_DEPTH:
            container = self.of_expr(iterable, at, depth + 1)
            if container.kind == ARRAY:
                return ARRAY_VALUE  # rows of an array
        return UNKNOWN_KIND

    def _literal_binding(self, name: str, at: cst.CSTNode) -> cst.BaseExpression | None:
        """The tuple/list literal `name` is bound to, when that is its only binding."""
        scope = self.idx.resolve(name, at)
        if scope is None:
            return None
        info = self.idx.scope_info(scope)
        bindings = info.bindings.get(name, [])
        if name in info.params or len(bindings) != 1 or not isinstance(bindings[0], cst.Assign):
            return None
        value = bindings[0].value
        return value if isinstance(value, (cst.Tuple, cst.List)) else None

    def _param(self, fdef: cst.FunctionDef, name: str, depth: int) -> ValueKind:
        params = fdef.params
        param = next(
            (
                p
                for p in (*params.posonly_params, *params.params, *params.kwonly_params)
                if p.name.value == name
            ),
            None,
        )
        if param is None:
            return UNKNOWN_KIND  # *args / **kwargs
        ann = UNKNOWN_KIND
        if param.annotation is not None:
            ann = self.annotation(param.annotation.annotation, depth + 1)
            if ann.kind != UNKNOWN:
                return ann
        default = self.of_expr(param.default, fdef, depth + 1) if param.default is not None else None
        sites = self.call_site_values(fdef, name, depth + 1)
        kinds = list(sites or [])
        if default is not None and (kinds or default.what != "None"):
            kinds.append(default)
        if not kinds or any(k.kind == UNKNOWN for k in kinds):
            return ann  # what the annotation says (a container, a callable), or unknown
        return combine(kinds)

    def call_site_values(self, fdef: cst.FunctionDef, name: str, depth: int) -> list[ValueKind] | None:
        """The kinds of the values the calls of module-level `fdef` in this file pass for parameter
        `name`; None when the function is not a module-level function, is used other than by
        calls, or has no call here (then other modules decide)."""
        if depth > MAX_DEPTH or not isinstance(self.idx.enclosing_scope(fdef), cst.Module):
            return None
        own = fdef.name.value
        if len(self.idx.module_bindings(own)) != 1:
            return None
        calls = self._calls_by_name().get(own)
        if not calls:
            return None
        params = fdef.params
        positional = [p.name.value for p in (*params.posonly_params, *params.params)]
        everything = param_names(params)
        if name not in everything:
            return None
        kinds: list[ValueKind] = []
        for call in calls:
            if self.idx.resolve(own, call) is not self.module:
                continue
            passed = argument_for(call, positional, name)
            if passed is STARRED:
                return None  # *args/**kwargs: which value lands on the parameter is not known
            if passed is None:
                continue  # the default: counted by the caller of this method
            kinds.append(self.of_expr(passed, call, depth))
        return kinds or None

    def _calls_by_name(self) -> dict[str, list[cst.Call]]:
        if self._calls is None:
            self._calls = calls_by_name(self.module, methods=False)
        return self._calls

    # -- expressions -----------------------------------------------------------------------
    def of_expr(self, expr: cst.BaseExpression | None, at: cst.CSTNode, depth: int = 0) -> ValueKind:
        """The kind of the value `expr` evaluates to, read at `at`."""
        if expr is None or depth > MAX_DEPTH + 2:
            return UNKNOWN_KIND
        if isinstance(expr, (cst.Integer, cst.Float, cst.Imaginary)):
            return NUMBER_VALUE
        if isinstance(expr, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return STRING_VALUE
        if isinstance(expr, cst.Name):
            return self.of_name(expr.value, at, depth)
        if isinstance(expr, cst.UnaryOperation):
            inner = self.of_expr(expr.expression, at, depth + 1)
            if isinstance(expr.operator, cst.Not):
                return BOOL_VALUE if inner.kind in (STATIC, NUMBER) else (ARRAY_VALUE if inner.kind == ARRAY else UNKNOWN_KIND)
            return inner if inner.kind in (NUMBER, ARRAY) else UNKNOWN_KIND
        if isinstance(expr, cst.Tuple):
            return self._tuple([e.value for e in expr.elements if not isinstance(e, cst.StarredElement)], at, depth, len(expr.elements))
        if isinstance(expr, (cst.List, cst.Set)):
            return self._container([e.value for e in expr.elements if not isinstance(e, cst.StarredElement)], at, depth, "list" if isinstance(expr, cst.List) else "set", len(expr.elements))
        if isinstance(expr, cst.Dict):
            values = [e.value for e in expr.elements if isinstance(e, cst.DictElement)]
            return self._container(values, at, depth, "dict", len(expr.elements))
        if isinstance(expr, (cst.ListComp, cst.SetComp)):
            elt = self.of_expr(expr.elt, expr, depth + 1)
            return self._container_of(elt, "list" if isinstance(expr, cst.ListComp) else "set")
        if isinstance(expr, cst.DictComp):
            return self._container_of(self.of_expr(expr.value, expr, depth + 1), "dict")
        if isinstance(expr, cst.GeneratorExp):
            return ValueKind(UNKNOWN, "generator", hashable=True)
        if isinstance(expr, cst.Lambda):
            return ValueKind(FRESH, "lambda", hashable=True, callable=True)
        if isinstance(expr, cst.IfExp):
            return combine([self.of_expr(expr.body, at, depth + 1), self.of_expr(expr.orelse, at, depth + 1)])
        if isinstance(expr, cst.BinaryOperation):
            return self._binary(expr, at, depth)
        if isinstance(expr, cst.BooleanOperation):
            return combine([self.of_expr(expr.left, at, depth + 1), self.of_expr(expr.right, at, depth + 1)])
        if isinstance(expr, cst.Comparison):
            parts = [self.of_expr(expr.left, at, depth + 1)] + [self.of_expr(c.comparator, at, depth + 1) for c in expr.comparisons]
            if any(p.kind == ARRAY for p in parts):
                return ARRAY_VALUE
            if all(p.kind in (NUMBER, STATIC) for p in parts):
                return BOOL_VALUE
            return UNKNOWN_KIND
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, at, depth)
        if isinstance(expr, cst.Subscript):
            base = self.of_expr(expr.value, at, depth + 1)
            if isinstance(expr.value, cst.Attribute) and expr.value.attr.value == "shape":
                return NUMBER_VALUE if not _is_slice(expr) else ValueKind(STATIC, "tuple of ints", hashable=True)
            if base.kind == ARRAY:
                return ARRAY_VALUE
            return UNKNOWN_KIND
        if isinstance(expr, cst.Call):
            return self._call(expr, at, depth)
        return UNKNOWN_KIND

    def _tuple(self, values: list[cst.BaseExpression], at, depth: int, count: int) -> ValueKind:
        kinds = [self.of_expr(v, at, depth + 1) for v in values]
        if len(values) != count:
            return UNKNOWN_KIND
        names = {k.kind for k in kinds}
        if not kinds:
            return ValueKind(STATIC, "empty tuple", hashable=True)
        if names <= {NUMBER}:
            return ValueKind(PYTREE, "tuple of numbers", hashable=True)
        if names <= {NUMBER, STATIC} and all(k.hashable for k in kinds):
            return ValueKind(STATIC, "tuple of hashable values", hashable=True)
        if names <= TRACEABLE:
            return ValueKind(PYTREE, "tuple of arrays", hashable=False)
        if FRESH in names:
            return ValueKind(UNHASHABLE, "tuple holding a function made here", hashable=True)
        return ValueKind(UNKNOWN, hashable=False if any(k.hashable is False for k in kinds) else None)

    def _container(self, values: list[cst.BaseExpression], at, depth: int, what: str, count: int) -> ValueKind:
        if len(values) != count:
            return ValueKind(UNKNOWN, what, hashable=False)
        if not values:
            return ValueKind(PYTREE, f"empty {what}", hashable=False)  # no leaves: traces as nothing
        kinds = [self.of_expr(v, at, depth + 1) for v in values]
        if all(k.traceable for k in kinds):
            return self._container_of(combine(kinds), what)
        if any(k.kind in (STATIC, FRESH, UNHASHABLE) for k in kinds):
            return self._container_of(next(k for k in kinds if k.kind in (STATIC, FRESH, UNHASHABLE)), what)
        return ValueKind(UNKNOWN, what, hashable=False)

    @staticmethod
    def _container_of(element: ValueKind, what: str) -> ValueKind:
        if element.traceable:
            return ValueKind(PYTREE, f"{what} of {'arrays' if element.kind != NUMBER else 'numbers'}", hashable=False)
        if element.kind == UNKNOWN:
            return ValueKind(UNKNOWN, what, hashable=False)
        settings = " of settings" if what == "dict" else ""
        return ValueKind(UNHASHABLE, f"{what}{settings}", hashable=False)

    def _binary(self, expr: cst.BinaryOperation, at, depth: int) -> ValueKind:
        left, right = self.of_expr(expr.left, at, depth + 1), self.of_expr(expr.right, at, depth + 1)
        kinds = {left.kind, right.kind}
        if ARRAY in kinds and not kinds & {STATIC, FRESH, UNHASHABLE}:
            return ARRAY_VALUE  # an array combined with anything it accepts is an array
        if kinds == {NUMBER}:
            return NUMBER_VALUE
        if left.what == right.what == "string" and isinstance(expr.operator, cst.Add):
            return STRING_VALUE
        if left.what == "string" and isinstance(expr.operator, cst.Modulo):
            return STRING_VALUE
        return UNKNOWN_KIND

    def _attribute(self, expr: cst.Attribute, at, depth: int) -> ValueKind:
        attr = expr.attr.value
        if attr in ("shape",):
            return ValueKind(STATIC, "tuple of ints", hashable=True)
        if attr in ("ndim", "size"):
            return NUMBER_VALUE
        if attr == "dtype":
            return ValueKind(STATIC, "dtype", hashable=True)
        if attr == "T":
            return ARRAY_VALUE if self.of_expr(expr.value, at, depth + 1).kind == ARRAY else UNKNOWN_KIND
        qual = self.qualify(expr)
        if qual is not None and qual in ("math.pi", "math.e", "numpy.pi", "jax.numpy.pi", "numpy.inf", "jax.numpy.inf"):
            return NUMBER_VALUE
        if qual is not None and qual.startswith(("jax.numpy.", "numpy.")) and qual.rsplit(".", 1)[-1] in _DTYPES:
            return ValueKind(STATIC, "dtype", hashable=True, callable=True)
        # `Mode.TRAIN` on an enum of this file; `cfg.lr` on an instance of a dataclass of this file
        if isinstance(expr.value, cst.Name):
            cls = self._module_class(expr.value.value, at)
            if cls is not None and self.class_kind(cls).what.startswith("enum"):
                return ValueKind(STATIC, f"enum member `{expr.value.value}.{attr}`", hashable=True)
        owner = self._instance_class(expr.value, at, depth)
        if owner is not None:
            return self._field_kind(owner, attr, depth)
        if qual is not None and "." in qual and self._module_function_like(qual):
            return ValueKind(STATIC, f"function `{qual}`", hashable=True, callable=True)
        return UNKNOWN_KIND

    @staticmethod
    def _module_function_like(qual: str) -> bool:
        """`jnp.tanh`, `jax.nn.relu`, `optax.adam`: attributes of imported modules are the same object
        every time (functions, classes or constants; a constant is rarely what a callable captures)."""
        head = qual.split(".", 1)[0]
        return head in ("jax", "numpy", "optax", "flax", "equinox", "math", "operator", "functools")

    def _call(self, expr: cst.Call, at, depth: int) -> ValueKind:
        qual = self.qualify(expr.func)
        if qual in FRESH_CALLS:
            made = qual.rsplit(".", 1)[-1]
            return ValueKind(FRESH, f"`{made}(...)` made here", hashable=True, callable=True)
        if qual in _NUMBER_CALLS:
            return NUMBER_VALUE
        if qual in _STATIC_CALLS:
            return _STATIC_CALLS[qual]
        if qual == "tuple":
            if expr.args and not expr.args[0].star:
                element = self.element_of(expr.args[0].value, at, depth + 1)
                if element.kind == NUMBER:
                    return ValueKind(PYTREE, "tuple of numbers", hashable=True)
                if element.static or element.kind == NUMBER:
                    return ValueKind(STATIC, "tuple of hashable values", hashable=True)
            return UNKNOWN_KIND
        if qual in ("dict",) and expr.args and all(a.keyword is not None for a in expr.args):
            return self._container([a.value for a in expr.args], at, depth, "dict", len(expr.args))
        if qual in _UNHASHABLE_CALLS:
            if expr.args and not expr.args[0].star and qual in ("list", "set"):
                return self._container_of(self.element_of(expr.args[0].value, at, depth + 1), qual)
            return ValueKind(UNHASHABLE, qual.rsplit(".", 1)[-1], hashable=False)
        if qual in ("min", "max", "sum"):
            parts = [self.of_expr(a.value, at, depth + 1) for a in expr.args if a.keyword is None and not a.star]
            if parts and all(p.kind == NUMBER for p in parts):
                return NUMBER_VALUE
            return UNKNOWN_KIND
        if qual is not None and qual.startswith(_ARRAY_MODULES) and qual not in _NOT_ARRAYS:
            return ARRAY_VALUE
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value in _ARRAY_RESULT_METHODS:
            if self.of_expr(expr.func.value, at, depth + 1).kind == ARRAY:
                return ARRAY_VALUE
        if isinstance(expr.func, cst.Name):
            cls = self._module_class(expr.func.value, at)
            if cls is not None:
                return self.class_kind(cls)
        if isinstance(expr.func, cst.Attribute) and expr.func.attr.value == "replace":
            owner = self._instance_class(expr.func.value, at, depth)
            if owner is not None:
                return self.class_kind(owner)  # dataclasses/flax `x.replace(...)`: same class
        if qual == "dataclasses.replace" and expr.args:
            owner = self._instance_class(expr.args[0].value, at, depth)
            if owner is not None:
                return self.class_kind(owner)
        return UNKNOWN_KIND

    # -- annotations -----------------------------------------------------------------------
    def annotation(self, ann: cst.BaseExpression, depth: int = 0) -> ValueKind:
        """The kind of a value annotated `ann`."""
        if isinstance(ann, cst.SimpleString):
            text = ann.evaluated_value if isinstance(ann.evaluated_value, str) else ""
            try:
                ann = cst.parse_expression(text)
            except cst.ParserSyntaxError:
                return UNKNOWN_KIND
        if isinstance(ann, cst.BinaryOperation) and isinstance(ann.operator, cst.BitOr):
            left, right = self.annotation(ann.left, depth + 1), self.annotation(ann.right, depth + 1)
            if right.what == "None":
                return left if left.static else UNKNOWN_KIND
            if left.what == "None":
                return right if right.static else UNKNOWN_KIND
            return combine([left, right])
        if isinstance(ann, cst.Name) and ann.value == "None":
            return NONE_VALUE
        head = ann.value if isinstance(ann, cst.Subscript) else ann
        qual = self.qualify(head) if isinstance(head, (cst.Name, cst.Attribute)) else None
        if qual is None and isinstance(head, cst.Name):
            qual = head.value
        if qual is None:
            return UNKNOWN_KIND
        short = qual.rsplit(".", 1)[-1]
        if qual in _ARRAY_TYPES or short in ("Array", "ArrayLike", "ndarray", "PRNGKeyArray"):
            return ARRAY_VALUE
        if (qual.startswith("jaxtyping.") or short in _JAXTYPING_DTYPES) and isinstance(ann, cst.Subscript):
            return ARRAY_VALUE
        if qual in _NUMBER_TYPES:
            return NUMBER_VALUE
        if qual in _STATIC_TYPES:
            return _STATIC_TYPES[qual]
        if qual in _CONTAINER_TYPES:
            return ValueKind(UNKNOWN, short.lower(), hashable=False)
        if qual in _CALLABLE_TYPES:
            return ValueKind(UNKNOWN, "callable", hashable=None, callable=True)
        if qual in _TUPLE_TYPES:
            if isinstance(ann, cst.Subscript):
                parts = [
                    self.annotation(e.slice.value, depth + 1)
                    for e in ann.slice
                    if isinstance(e.slice, cst.Index) and not (isinstance(e.slice.value, cst.Ellipsis))
                ]
                if parts and all(p.kind == NUMBER for p in parts):
                    return ValueKind(PYTREE, "tuple of numbers", hashable=True)
                if parts and all(p.static or p.kind == NUMBER for p in parts):
                    return ValueKind(STATIC, "tuple of hashable values", hashable=True)
                if parts and all(p.traceable for p in parts):
                    return ValueKind(PYTREE, "tuple of arrays", hashable=False)
            return UNKNOWN_KIND
        if qual in _OPTIONAL_TYPES and isinstance(ann, cst.Subscript) and len(ann.slice) == 1:
            inner = ann.slice[0].slice
            if isinstance(inner, cst.Index):
                kind = self.annotation(inner.value, depth + 1)
                return kind if kind.static else UNKNOWN_KIND
            return UNKNOWN_KIND
        if isinstance(head, cst.Name) and depth <= MAX_DEPTH:
            cls = self._module_class(head.value, None)
            if cls is not None:
                return self.class_kind(cls)
        return UNKNOWN_KIND


_ARRAY_RESULT_METHODS = frozenset(
    {"reshape", "astype", "transpose", "squeeze", "ravel", "flatten", "sum", "mean", "max", "min", "dot", "clip", "copy", "T"}
)
_DTYPES = frozenset(
    {"float32", "float64", "float16", "bfloat16", "int32", "int64", "int8", "uint8", "bool_", "complex64", "complex128"}
)


def _is_slice(expr: cst.Subscript) -> bool:
    return any(isinstance(e.slice, cst.Slice) for e in expr.slice)


def _scope_name(scope: cst.CSTNode) -> str:
    if isinstance(scope, (cst.FunctionDef, cst.ClassDef)):
        return scope.name.value
    return "<lambda>" if isinstance(scope, cst.Lambda) else "a comprehension"
