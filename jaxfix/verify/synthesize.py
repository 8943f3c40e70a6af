"""Values made up from annotations, the last source of inputs when nothing else gave any.

The parent never imports user code, so everything here reads annotations as text (`ast`) and
produces plain values, `ArrayArg`s, and `Construct`s (a class of the user's project built in the
child from synthesized field values, after the module under test is loaded). Values are chosen to
take both sides of a sign test and 0, 1 and many loop trips:

- jaxtyping `Float[Array, "b n"]` & co. (named dims bound to distinct sizes, so nothing is square
  by accident; over Python scalars they give scalars), `jax.Array`/`jnp.ndarray`/`np.ndarray`;
- `float`, `numbers.Real`, `Scalar`-like aliases; `int`, `numbers.Integral`; `bool`; `Literal`;
- unions member by member (`list | None` gives a small list and `None`), `Optional[X]` both;
  `list[X]`/`tuple[X, ...]`/`Sequence[X]` small containers; PRNG keys;
- a dataclass / flax struct / `eqx.Module` / NamedTuple, or a class with an annotated `__init__`,
  defined in the module or imported from the project: built from its fields' annotations
  (fields with defaults keep them); the same gives the instance of a method or property;
- parameters with a default: the default when nothing else can be made for them;
- with `guess`, unannotated parameters: 1.5, -2.0, 0, 3 and a small array ("guessed").
"""

from __future__ import annotations

import ast
import itertools
import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from jaxfix.verify.changed import CallableInfo, Param, _params
from jaxfix.verify.protocol import ArrayArg, Call, Construct

MAX_SYNTHESIZED = 8
MAX_INSTANCES = 3
DIM_SIZES = (3, 5, 2, 4, 6, 7)
ARRAY_NAMES = {"jax.Array", "Array", "jnp.ndarray", "jax.numpy.ndarray", "chex.Array", "ArrayLike", "jax.typing.ArrayLike"}
NUMPY_NAMES = {"np.ndarray", "numpy.ndarray"}
FLOAT_NAMES = {
    "float", "Real", "numbers.Real", "Number", "numbers.Number", "SupportsFloat", "typing.SupportsFloat",
    "Scalar", "ScalarLike", "chex.Scalar", "chex.Numeric", "Numeric", "jaxtyping.Scalar", "jaxtyping.ScalarLike",
}
INT_NAMES = {"int", "Integral", "numbers.Integral", "SupportsInt", "SupportsIndex", "typing.SupportsIndex"}
KEY_NAMES = {"PRNGKeyArray", "jaxtyping.PRNGKeyArray", "KeyArray", "jax.random.KeyArray", "PRNGKey", "chex.PRNGKey"}
SEQUENCE_HEADS = {"list", "List", "typing.List", "Sequence", "typing.Sequence", "collections.abc.Sequence", "Iterable",
                  "typing.Iterable", "collections.abc.Iterable"}
TUPLE_HEADS = {"tuple", "Tuple", "typing.Tuple"}
UNION_HEADS = {"Union", "typing.Union"}
OPTIONAL_HEADS = {"Optional", "typing.Optional"}
LITERAL_HEADS = {"Literal", "typing.Literal", "typing_extensions.Literal"}
ANY_NAMES = {"Any", "typing.Any"}
JAXTYPING_DTYPES = {
    "Float": "float32", "Float32": "float32", "Float64": "float64", "Float16": "float16", "BFloat16": "bfloat16",
    "Inexact": "float32", "Real": "float32", "Num": "float32", "Shaped": "float32",
    "Int": "int32", "Int32": "int32", "Int64": "int64", "Integer": "int32", "UInt8": "uint8", "UInt32": "uint32",
    "Bool": "bool",
}
DATACLASS_DECORATORS = ("dataclass", "dataclasses.dataclass", "struct.dataclass", "flax.struct.dataclass", "chex.dataclass")
PYTREE_BASES = ("eqx.Module", "equinox.Module", "NamedTuple", "typing.NamedTuple", "struct.PyTreeNode",
                "flax.struct.PyTreeNode", "PyTreeNode")


class CannotSynthesize(Exception):
    """Why values cannot be made up for a callable (the message names the parameter)."""


class _Omit:
    """Leave the parameter out of the call: its default applies."""

    def __repr__(self) -> str:
        return "<default>"


OMIT = _Omit()


@dataclass
class _Dims:
    sizes: dict[str, int] = field(default_factory=dict)

    def size(self, name: str) -> int:
        if name not in self.sizes:
            self.sizes[name] = DIM_SIZES[len(self.sizes) % len(DIM_SIZES)]
        return self.sizes[name]


# -- where classes come from ----------------------------------------------------------------------


@dataclass
class _ModuleText:
    name: str  # import name
    tree: ast.Module


@dataclass
class Context:
    """What synthesis may read besides the callable: the module's text, its import name and the
    folders its imports resolve against (to find project classes used as parameter types)."""

    source: str
    module_name: str
    sys_path: list[str] = field(default_factory=list)
    _modules: dict[str, _ModuleText | None] = field(default_factory=dict)

    def module(self, name: str) -> _ModuleText | None:
        if name == self.module_name:
            return _ModuleText(name, ast.parse(self.source))
        if name not in self._modules:
            self._modules[name] = None
            for folder in self.sys_path:
                base = Path(folder, *name.split("."))
                for file in (base.with_suffix(".py"), base / "__init__.py"):
                    if file.is_file():
                        try:
                            self._modules[name] = _ModuleText(name, ast.parse(file.read_bytes()))
                        except (SyntaxError, ValueError, OSError):
                            pass
                        break
                if self._modules[name] is not None:
                    break
        return self._modules[name]

    def find_class(self, text: str, where: str | None = None, depth: int = 0) -> tuple[str, ast.ClassDef, _ModuleText] | None:
        """(module name, class node, its module) for an annotation naming a project class."""
        where = where or self.module_name
        mod = self.module(where)
        if mod is None or depth > 3:
            return None
        head, _, rest = text.partition(".")
        for node in mod.tree.body:
            if isinstance(node, ast.ClassDef) and node.name == text:
                return where, node, mod
        for node in mod.tree.body:
            if isinstance(node, ast.ImportFrom):
                base = _absolute(node, where, self)
                for alias in node.names:
                    bound = alias.asname or alias.name
                    if bound == text:
                        return self.find_class(alias.name, base, depth + 1)
                    if bound == head and rest:  # `from pkg import config` + `config.Config`
                        return self.find_class(rest, f"{base}.{alias.name}", depth + 1)
            elif isinstance(node, ast.Import) and rest:
                for alias in node.names:
                    if (alias.asname or alias.name) == head:
                        return self.find_class(rest, alias.name, depth + 1)
                    if alias.asname is None and text.startswith(alias.name + "."):
                        return self.find_class(text[len(alias.name) + 1:], alias.name, depth + 1)
        return None


def _absolute(node: ast.ImportFrom, where: str, context: Context) -> str:
    if not node.level:
        return node.module or ""
    package = where.split(".")
    mod = context.module(where)
    is_package = mod is not None and any(Path(f, *package, "__init__.py").is_file() for f in context.sys_path)
    base = package if is_package else package[:-1]
    base = base[: len(base) - node.level + 1]
    return ".".join([*base, node.module] if node.module else base)


def _is_pytree_class(node: ast.ClassDef) -> bool:
    decorators = [ast.unparse(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list]
    bases = [ast.unparse(b) for b in node.bases]
    return any(d in DATACLASS_DECORATORS for d in decorators) or any(b in PYTREE_BASES for b in bases)


def _fields(node: ast.ClassDef, pytree_base: bool = False) -> list[Param] | None:
    """The constructor's parameters: an explicit annotated `__init__`, else dataclass-style fields
    (of a dataclass-like class, or of a subclass of one: `pytree_base`)."""
    for item in node.body:
        if isinstance(item, ast.FunctionDef) and item.name == "__init__":
            return list(_params(item, "method"))[1:]
    if not _is_pytree_class(node) and not pytree_base:
        return None
    found = []
    for item in node.body:
        if not isinstance(item, ast.AnnAssign) or not isinstance(item.target, ast.Name):
            continue
        annotation = ast.unparse(item.annotation)
        if annotation.startswith(("ClassVar", "typing.ClassVar")):
            continue
        default = None if item.value is None else ast.unparse(item.value)
        if isinstance(item.value, ast.Call) and any(k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False
                                                    for k in item.value.keywords):
            continue
        if isinstance(item.value, ast.Call) and not any(k.arg in ("default", "default_factory") for k in item.value.keywords):
            default = None  # field(static=True) / field(pytree_node=False): no default
        found.append(Param(item.target.id, annotation, default, "keyword"))
    return found


def _inherited_fields(node: ast.ClassDef, module_name: str, context: Context, depth: int = 0) -> list[Param] | None:
    """`_fields` with the fields of project base classes first (dataclass order; a redefined
    field keeps its first place and takes the subclass's default)."""
    if depth > 3 or any(isinstance(i, ast.FunctionDef) and i.name == "__init__" for i in node.body):
        return _fields(node)
    merged: dict[str, Param] = {}
    pytree_base = False
    for base in node.bases:
        found = context.find_class(ast.unparse(base), module_name)
        inherited = None if found is None else _inherited_fields(found[1], found[0], context, depth + 1)
        if inherited is not None:
            pytree_base = True
            merged.update((param.name, param) for param in inherited)
    own = _fields(node, pytree_base)
    if own is None:
        return None
    merged.update((param.name, param) for param in own)
    return list(merged.values())


def instances(text: str, context: Context | None, dims: _Dims, depth: int = 0) -> list[Construct]:
    """Up to MAX_INSTANCES instances of the project class named by `text`, built in the child."""
    found = context.find_class(text) if context is not None else None
    if found is None or depth > 3:
        raise CannotSynthesize(f"`{text}` is not a class jaxfix can build (a dataclass, flax struct, eqx.Module, "
                               f"NamedTuple or a class with an annotated __init__ of this project)")
    module_name, node, _ = found
    params = _inherited_fields(node, module_name, context)
    if params is None:
        raise CannotSynthesize(f"class {node.name} is neither a dataclass-like pytree nor has an __init__ to build it from")
    pools = []
    for param in params:
        if param.kind == "var":
            continue
        if param.default is not None:
            pools.append((param, [OMIT]))
            continue
        try:
            pools.append((param, candidates(param, dims, False, context, depth + 1)))
        except CannotSynthesize as exc:
            raise CannotSynthesize(f"cannot build {node.name}: {exc}") from None
    width = min(MAX_INSTANCES, max((len(pool) for _, pool in pools), default=1))
    built = []
    for variant in range(width):
        args, kwargs, by_keyword = [], {}, False
        for param, pool in pools:
            value = pool[variant % len(pool)]
            if value is OMIT:
                by_keyword = True
            elif param.kind == "keyword" or by_keyword:
                kwargs[param.name] = value
            else:
                args.append(value)
        built.append(Construct(module_name, node.name, tuple(args), kwargs))
    return built


# -- values per annotation ------------------------------------------------------------------------


def _array_values(dtype: str, shape: tuple[int, ...], variant: int) -> np.ndarray:
    n = int(np.prod(shape)) if shape else 1
    rng = np.random.default_rng(1234 + variant)
    if dtype == "bool":
        base = [np.arange(n) % 2 == 0, np.ones(n, bool), np.zeros(n, bool)][variant % 3]
    elif dtype.startswith(("int", "uint")):
        base = [np.arange(n) % 4, np.ones(n, int), rng.integers(0, 5, n)][variant % 3]
        if not dtype.startswith("uint") and variant % 3 == 0:
            base = base - 1  # some negatives
    else:
        base = [np.linspace(-1.5, 2.0, n), rng.uniform(0.5, 2.0, n), -rng.uniform(0.5, 2.0, n)][variant % 3]
    if dtype == "bfloat16":
        import ml_dtypes

        return np.asarray(base, dtype=ml_dtypes.bfloat16).reshape(shape)
    return np.asarray(base, dtype=dtype).reshape(shape)


def _subscript_parts(node: ast.expr) -> tuple[str, list[ast.expr]] | None:
    if isinstance(node, ast.Subscript):
        head = ast.unparse(node.value)
        inner = node.slice
        items = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
        return head, items
    return None


def _shape(spec: str, dims: _Dims) -> tuple[int, ...]:
    shape = []
    for token in spec.split():
        token = token.lstrip("#*").split("=")[-1]
        if token in ("...", "") or token.startswith("*"):
            continue
        if token.isdigit():
            shape.append(int(token))
        elif token == "_":
            shape.append(3)
        else:
            shape.append(dims.size(token))
    return tuple(shape)


FLOATS = [1.5, -2.0, 0.0, 37.5]  # both signs, zero, and many halvings/trips
INTS = [3, 1, 0]


def _union_members(node: ast.expr) -> list[ast.expr] | None:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return [*(_union_members(node.left) or [node.left]), *(_union_members(node.right) or [node.right])]
    parts = _subscript_parts(node)
    if parts is not None and parts[0] in UNION_HEADS:
        return parts[1]
    if parts is not None and parts[0] in OPTIONAL_HEADS:
        return [parts[1][0], ast.Constant(None)]
    return None


def _interleave(pools: list[list[object]]) -> list[object]:
    """Each member in turn: the first value of every member, then the second, ..."""
    out = []
    for values in itertools.zip_longest(*pools, fillvalue=OMIT):
        out.extend(v for v in values if v is not OMIT)
    return out


def _from_node(node: ast.expr, name: str, dims: _Dims, guess: bool, context: Context | None, depth: int) -> list[object]:
    text = ast.unparse(node)
    if isinstance(node, ast.Constant):
        if node.value is None:
            return [None]
        if isinstance(node.value, str):  # a forward reference
            return _from_node(ast.parse(node.value.strip(), mode="eval").body, name, dims, guess, context, depth)
    members = _union_members(node)
    if members is not None:
        pools, reasons = [], []
        for member in members:
            try:
                pools.append(_from_node(member, name, dims, guess, context, depth))
            except CannotSynthesize as exc:
                reasons.append(str(exc))
        if not pools:
            raise CannotSynthesize(f"parameter `{name}`: no member of the union {text} can be made ({reasons[0]})")
        return _interleave(pools)
    if text in FLOAT_NAMES:
        return list(FLOATS)
    if text in INT_NAMES:
        return list(INTS)
    if text == "bool":
        return [True, False]
    if text in ANY_NAMES and guess:
        return _guesses()
    if text in KEY_NAMES:
        return [Construct("jax.random", "PRNGKey", (0,)), Construct("jax.random", "PRNGKey", (1,))]
    if text in ARRAY_NAMES or text in NUMPY_NAMES:
        # No shape given: vectors (mixed signs, all positive, all negative) and 0-d values for code
        # that branches on a scalar (1.5 and 37.5 above the usual thresholds, -2.0 below).
        as_jax = text not in NUMPY_NAMES
        vectors = [ArrayArg(_array_values("float32", (3,), v), jax=as_jax) for v in range(3)]
        scalars = [ArrayArg(np.asarray(v, np.float32), jax=as_jax) for v in (1.5, -2.0, 37.5)]
        return [vectors[0], scalars[0], scalars[1], vectors[1], scalars[2], vectors[2]]
    if text in SEQUENCE_HEADS:
        return [[1.5, -2.0, 0.5], [1.0]]
    if text in TUPLE_HEADS:
        return [(1.5, -2.0, 0.5), (1.0,)]
    parts = _subscript_parts(node)
    if parts is not None:
        head, items = parts
        if head in LITERAL_HEADS:
            return [item.value for item in items if isinstance(item, ast.Constant)]
        if head in SEQUENCE_HEADS and items:
            values = _from_node(items[0], name, dims, guess, context, depth)
            return [[values[i % len(values)] for i in range(3)], values[:1]]
        if head in TUPLE_HEADS and items:
            if len(items) == 2 and isinstance(items[1], ast.Constant) and items[1].value is Ellipsis:
                values = _from_node(items[0], name, dims, guess, context, depth)
                return [tuple(values[i % len(values)] for i in range(3)), tuple(values[:1])]
            pools = [_from_node(item, name, dims, guess, context, depth) for item in items]
            return [tuple(pool[v % len(pool)] for pool in pools) for v in range(max(map(len, pools)))]
        dtype_name = head.rpartition(".")[2]
        if dtype_name in JAXTYPING_DTYPES and len(items) == 2:
            return _jaxtyping(items, dtype_name, name, text, dims)
        if head.rpartition(".")[2] == "Key" and len(items) == 2:
            return [Construct("jax.random", "PRNGKey", (0,))]
    if context is not None and isinstance(node, ast.Name | ast.Attribute):
        try:
            return list(instances(text, context, dims, depth))
        except CannotSynthesize as exc:
            raise CannotSynthesize(f"parameter `{name}`: {exc}") from None
    raise CannotSynthesize(f"parameter `{name}` has an annotation jaxfix cannot make values for ({text})")


def _jaxtyping(items: list[ast.expr], dtype_name: str, name: str, text: str, dims: _Dims) -> list[object]:
    array_type = ast.unparse(items[0])
    spec = items[1].value if isinstance(items[1], ast.Constant) and isinstance(items[1].value, str) else None
    if spec is None:
        raise CannotSynthesize(f"parameter `{name}`: jaxtyping shape is not a string ({text})")
    shape = _shape(spec, dims)
    dtype = JAXTYPING_DTYPES[dtype_name]
    if array_type in ("float", "int", "bool", "Scalar", "ScalarLike", "jaxtyping.Scalar", "jaxtyping.ScalarLike"):
        if shape:
            raise CannotSynthesize(f"parameter `{name}`: a Python scalar cannot have the shape of {text}")
        if dtype == "bool":
            return [True, False]
        return list(INTS) if dtype.startswith(("int", "uint")) else list(FLOATS)
    as_jax = array_type not in NUMPY_NAMES
    return [ArrayArg(_array_values(dtype, shape, v), jax=as_jax) for v in range(3)]


def _guesses(use: str = "") -> list[object]:
    # Scalars of both signs, 0/1/many as ints, and a small mixed-sign array. Inputs the original
    # rejects are not compared, so a wrong guess costs coverage, not correctness; the body's own
    # use of the parameter (`changed.parameter_uses`) narrows them: a loop bound or an index gets
    # ints, an indexed parameter arrays with as many dimensions (4 long: `x[-1]`, `x[1:3]`, `x[2]`).
    if use == "int":
        return [0, 1, 3]
    if use.startswith("array:"):
        ndim = max(int(use.partition(":")[2]), 1)
        return [ArrayArg(_array_values("float32", (4,) * ndim, v)) for v in range(2)]
    return [1.5, -2.0, 0, 3, ArrayArg(_array_values("float32", (3,), 0))]


def candidates(param: Param, dims: _Dims, guess: bool = False, context: Context | None = None, depth: int = 0) -> list[object]:
    """Values for one parameter, most diverse first."""
    if param.annotation is None:
        if param.default is not None:
            try:
                return [ast.literal_eval(param.default)]
            except ValueError:
                return [OMIT]
        if not guess:
            raise CannotSynthesize(f"parameter `{param.name}` has no annotation")
        return _guesses(param.use)
    text = param.annotation.strip("'\"")
    ndim = int(param.use.partition(":")[2]) if param.use.startswith("array:") else 0
    if ndim >= 2 and (text in ARRAY_NAMES or text in NUMPY_NAMES):
        # an unshaped array annotation on a parameter the body indexes with several indices
        return [ArrayArg(_array_values("float32", (4,) * ndim, v), jax=text not in NUMPY_NAMES) for v in range(3)]
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        raise CannotSynthesize(f"cannot read the annotation of `{param.name}`: {text}") from None
    try:
        return _from_node(node, param.name, dims, guess, context, depth)
    except CannotSynthesize:
        if param.default is not None:
            return [OMIT]
        raise


def synthesize(info: CallableInfo, limit: int = MAX_SYNTHESIZED, *, guess: bool = False, context: Context | None = None) -> list[Call]:
    """Calls built from the annotations of `info`; raises CannotSynthesize with the reason.

    With `guess`, unannotated parameters get guessed values (and the calls say "guessed"). With a
    `context`, project classes are built from their fields, also as the instance of a method or
    property."""
    dims = _Dims()
    params = list(info.params)
    pools: list[list[object]] = []
    names: list[tuple[str, str]] = []
    if info.kind in ("method", "property"):
        owner = info.qualname.rpartition(".")[0]
        if context is None or "." in owner:
            raise CannotSynthesize(f"{info.qualname} is a {info.kind}: it needs an instance (declare examples or --record)")
        try:
            pools.append(list(instances(owner, context, dims)))
        except CannotSynthesize as exc:
            raise CannotSynthesize(f"{info.qualname} is a {info.kind}: it needs an instance, and {exc}") from None
        names.append(("self", "positional"))
        params = params[1:]
    elif info.kind not in ("function", "staticmethod", "classmethod"):
        raise CannotSynthesize(f"{info.qualname} is a {info.kind}: it needs an instance (declare examples or --record)")
    guessed = False
    for param in params:
        if param.kind == "var":
            continue
        names.append((param.name, param.kind))
        guessed |= param.annotation is None and param.default is None
        pools.append(candidates(param, dims, guess, context))
    if not pools:
        return [Call(label="no arguments", source="synthesized")]
    combos = _combinations([len(pool) for pool in pools], limit)
    calls = []
    for number, combo in enumerate(combos):
        args, kwargs, by_keyword = [], {}, False
        for (name, kind), pool, i in zip(names, pools, combo):
            value = pool[i]
            if value is OMIT:
                by_keyword = True  # later positional parameters go by name
            elif kind == "keyword" or by_keyword:
                kwargs[name] = value
            else:
                args.append(value)
        calls.append(Call(tuple(args), kwargs, label=f"input {number + 1}", source="guessed" if guessed else "synthesized"))
    return calls


def _combinations(sizes: list[int], limit: int) -> list[tuple[int, ...]]:
    """At most `limit` index tuples into pools of these sizes: every value of every parameter at
    least once (the diagonal), then the rest of the product in order.

    Lazy: a function with 15 parameters of 3 candidates each has 14 million combinations, and
    listing them all took the verifier's memory (23 GB before the kernel stopped it)."""
    if math.prod(sizes) <= limit:
        return list(itertools.product(*(range(size) for size in sizes)))
    width = max(sizes)
    chosen = list(dict.fromkeys(tuple(i % size for size in sizes) for i in range(width)))
    if len(chosen) < limit:
        seen = set(chosen)
        for combo in itertools.product(*(range(size) for size in sizes)):
            if len(chosen) >= limit:
                break
            if combo not in seen:
                chosen.append(combo)
    return chosen[:limit]
