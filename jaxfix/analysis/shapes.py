"""Static integers and array sizes: what `N * N`, `range(0, N, 2)` or `jnp.ones((N, 1024))` come to
before anything runs.

One evaluator, `int_value`, does the arithmetic (integer literals, module-level integer
constants, unary `+`/`-`, and `+ - * // ** <<` with bounded exponents and shifts) on libcst and
stdlib-AST nodes alike: a thin adapter per tree type says what a node is, so the libcst analysis
(`module_int_constants`) and the stdlib-AST screens (`ast_module_int_constants`) cannot disagree
about a value.
`array_size` reads the element count of an array-creation expression (`jnp.ones((N, N))`,
`np.random.randn(512, 512)`, `jnp.eye(N)`, ...) on the libcst tree.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Iterator, Mapping

import libcst as cst

from jaxfix.analysis.body_facts import assigned_names, target_names
from jaxfix.analysis.names import dotted_name
from jaxfix.analysis.walk import statements

# -- the evaluator ----------------------------------------------------------------------------------

# What a node is, as the evaluator sees it: ("int", value), ("name", identifier),
# ("unary", "-" | "+" | None, operand), ("binary", operator | None, left, right), or None (not
# integer arithmetic); a None operator is one the evaluator does not compute. `_READERS` maps
# each node type of both trees to the function that reads such a node.
Term = tuple


def _power(a: int, b: int) -> int | None:
    return a**b if 0 <= b <= 64 else None


def _shift(a: int, b: int) -> int | None:
    return a << b if 0 <= b <= 64 else None


_BINARY: dict[str, Callable[[int, int], int | None]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "//": lambda a, b: a // b if b else None,
    "**": _power,
    "<<": _shift,
}


def _evaluate(node: object, consts: Mapping[str, int]) -> int | None:
    reader = _READERS.get(type(node))
    term = None if reader is None else reader(node)
    if term is None:
        return None
    kind = term[0]
    if kind == "int":
        return term[1]
    if kind == "name":
        return consts.get(term[1])
    if kind == "unary":
        if term[1] is None:
            return None
        v = _evaluate(term[2], consts)
        return None if v is None else (-v if term[1] == "-" else v)
    a, b = _evaluate(term[2], consts), _evaluate(term[3], consts)
    if a is None or b is None:
        return None
    apply = _BINARY.get(term[1])
    return None if apply is None else apply(a, b)


def _constants(bindings: Iterable[tuple[str, object]], counts: Mapping[str, int]) -> dict[str, int]:
    """Names bound once (`counts`), in binding order, to integer expressions of literals and the
    constants before them."""
    out: dict[str, int] = {}
    for name, value in bindings:
        if counts.get(name) == 1:
            v = _evaluate(value, out)
            if v is not None:
                out[name] = v
    return out


# -- the adapters: what a node of each tree type is, as a `Term` ----------------------------------

_CST_UNARY = {cst.Minus: "-", cst.Plus: "+"}
_CST_BINARY = {
    cst.Add: "+",
    cst.Subtract: "-",
    cst.Multiply: "*",
    cst.FloorDivide: "//",
    cst.Power: "**",
    cst.LeftShift: "<<",
}
_AST_UNARY = {ast.USub: "-", ast.UAdd: "+"}
_AST_BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.FloorDiv: "//", ast.Pow: "**", ast.LShift: "<<"}

# libcst's and the stdlib AST's node types are distinct, so one table serves both trees
_READERS: dict[type, Callable[[object], Term | None]] = {
    cst.Integer: lambda e: ("int", int(e.evaluated_value)),
    cst.Name: lambda e: ("name", e.value),
    cst.UnaryOperation: lambda e: ("unary", _CST_UNARY.get(type(e.operator)), e.expression),
    cst.BinaryOperation: lambda e: ("binary", _CST_BINARY.get(type(e.operator)), e.left, e.right),
    ast.Constant: lambda e: ("int", e.value) if isinstance(e.value, int) and not isinstance(e.value, bool) else None,
    ast.Name: lambda e: ("name", e.id),
    ast.UnaryOp: lambda e: ("unary", _AST_UNARY.get(type(e.op)), e.operand),
    ast.BinOp: lambda e: ("binary", _AST_BINARY.get(type(e.op)), e.left, e.right),
}


def int_value(e: cst.BaseExpression | ast.AST, consts: Mapping[str, int]) -> int | None:
    """The value of an integer expression (a libcst or a stdlib-AST node) of literals and known
    constants, else None."""
    return _evaluate(e, consts)


# -- module-level integer constants ----------------------------------------------------------------


def module_int_constants(module: cst.Module) -> dict[str, int]:
    """Module-level names bound exactly once, at top level, to an integer expression of literals and
    earlier such names (`N = 1024`, `SIZE = N * N`)."""
    return _constants(_cst_bindings(module), module_binding_counts(module))


def _cst_bindings(module: cst.Module) -> Iterator[tuple[str, cst.BaseExpression]]:
    """(name, value) of each top-level `name = value` and `name: T = value`, in source order."""
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                yield small.targets[0].target.value, small.value
            elif isinstance(small, cst.AnnAssign) and isinstance(small.target, cst.Name) and small.value is not None:
                yield small.target.value, small.value


def module_binding_counts(module: cst.Module) -> dict[str, int]:
    """How often each name is bound at module scope or through `global` (a name bound twice is not
    a constant)."""
    counts: dict[str, int] = {}
    for name in _module_bindings(module):
        counts[name] = counts.get(name, 0) + 1
    return counts


def _module_bindings(module: cst.Module) -> list[str]:
    out: list[str] = []
    globals_: set[str] = set()
    for g in statements(module):  # `global` is a statement: no need to walk expressions
        if isinstance(g, cst.Global):
            globals_.update(n.name.value for n in g.names)
    for stmt in module.body:
        if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
            out.append(stmt.name.value)
            continue
        if not isinstance(stmt, cst.SimpleStatementLine):
            out.extend(sorted(assigned_names(cst.IndentedBlock(body=[stmt]))))
            continue
        for small in stmt.body:
            if isinstance(small, cst.Assign):
                for t in small.targets:
                    out.extend(target_names(t.target))
            elif isinstance(small, cst.AnnAssign):
                out.extend(target_names(small.target))
            elif isinstance(small, cst.AugAssign):  # a rebinding: counted as two
                out.extend(target_names(small.target) * 2)
            elif isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(small.names, cst.ImportStar):
                for alias in small.names:
                    name = dotted_name(alias.asname.name if alias.asname is not None else alias.name)
                    if name:
                        out.append(name.split(".")[0])
    out.extend(sorted(globals_))  # a `global` statement means some function may rebind it
    return out


# -- the same on the stdlib AST (for screens) -------------------------------------------------------


def ast_module_int_constants(tree: ast.Module) -> dict[str, int]:
    """`module_int_constants` for screens: names bound once by the module's top-level assignments
    (it does not count other bindings, so it knows at least the constants the libcst one knows)."""
    counts: dict[str, int] = {}
    values: dict[str, ast.AST] = {}
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
        for t in targets:
            if isinstance(t, ast.Name):
                counts[t.id] = counts.get(t.id, 0) + 1
                if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1) or (
                    isinstance(stmt, ast.AnnAssign) and stmt.value is not None
                ):
                    values[t.id] = stmt.value
    return _constants(values.items(), counts)


# -- array sizes (libcst) ---------------------------------------------------------------------------

# creator -> (positional index of the shape, keyword of the shape); -1: the shape is all the positionals
_SHAPE_FIRST = {
    f"{mod}.{fn}": (0, "shape")
    for mod in ("jax.numpy", "numpy")
    for fn in ("ones", "zeros", "empty", "full")
}
_SHAPE_ARG = {
    **_SHAPE_FIRST,
    "jax.random.normal": (1, "shape"),
    "jax.random.uniform": (1, "shape"),
    "jax.random.truncated_normal": (3, "shape"),
    "jax.random.bernoulli": (2, "shape"),
    "numpy.random.normal": (2, "size"),
    "numpy.random.uniform": (2, "size"),
    "numpy.random.randint": (2, "size"),
    "numpy.random.standard_normal": (0, "size"),
    "numpy.random.random": (0, "size"),
    "numpy.random.random_sample": (0, "size"),
    "numpy.random.rand": (-1, ""),
    "numpy.random.randn": (-1, ""),
}
# methods of a NumPy random generator (`rng.normal(size=...)`) that take a size
_GENERATOR_METHODS = frozenset({"randn", "rand", "normal", "uniform", "standard_normal", "random", "random_sample"})
_WRAPPERS = frozenset(
    {"jax.numpy.asarray", "jax.numpy.array", "numpy.asarray", "numpy.array", "jax.device_put", "numpy.ascontiguousarray"}
)
# methods and attributes that keep the number of elements (`.astype(...)`, `.T`)
_SIZE_METHODS = frozenset({"astype", "reshape", "copy", "block_until_ready", "T", "transpose", "ravel", "flatten"})
# the last identifier of every creator `array_size` knows (`ones`, `randn`, `eye`, ...), for screens
CREATOR_IDENTS = frozenset(
    {*(q.rsplit(".", 1)[-1] for q in _SHAPE_ARG), *_GENERATOR_METHODS, "eye", "identity", "arange", "linspace"}
)


def shape_size(e: cst.BaseExpression, consts: Mapping[str, int]) -> int | None:
    """Number of elements of a static shape: an int or a tuple/list of ints."""
    if isinstance(e, (cst.Tuple, cst.List)):
        size = 1
        for el in e.elements:
            if isinstance(el, cst.StarredElement):
                return None
            v = int_value(el.value, consts)
            if v is None or v < 0:
                return None
            size *= v
        return size
    v = int_value(e, consts)
    return v if v is not None and v >= 0 else None


def array_size(e: cst.BaseExpression, names, consts: Mapping[str, int]) -> tuple[int, str] | None:
    """(elements, creator) for an array built with a static size: `jnp.ones((1000, 1000))`,
    `np.random.randn(512, 512)`, `jnp.asarray(np.random.randn(...))`, `jnp.eye(N)`, `.astype(...)`.
    `names` is the module's `ImportMap`."""
    if isinstance(e, cst.Attribute) and e.attr.value == "T":
        return array_size(e.value, names, consts)
    if isinstance(e, cst.BinaryOperation):  # `jnp.asarray(...) / N`, `scale * jnp.ones(...)`
        sides = [r for r in (array_size(e.left, names, consts), array_size(e.right, names, consts)) if r is not None]
        return max(sides) if sides else None
    if isinstance(e, cst.UnaryOperation):
        return array_size(e.expression, names, consts)
    if not isinstance(e, cst.Call):
        return None
    func = e.func
    if isinstance(func, cst.Attribute) and func.attr.value in _SIZE_METHODS and isinstance(func.value, (cst.Call, cst.Attribute)):
        return array_size(func.value, names, consts)  # `jnp.ones(...).astype(...)`, `np.random.randn(...).T.copy()`
    q = names.qualify(func)
    pos = [a.value for a in e.args if a.keyword is None and not a.star]
    kws = {a.keyword.value: a.value for a in e.args if a.keyword is not None}
    if (q is None or q not in _SHAPE_ARG) and isinstance(func, cst.Attribute) and func.attr.value in _GENERATOR_METHODS:
        head = func.value
        while isinstance(head, (cst.Attribute, cst.Call)):
            head = head.value if isinstance(head, cst.Attribute) else head.func
        if not (isinstance(head, cst.Name) and head.value in names.bindings and q is not None):
            # `rng.normal(size=...)`, `np.random.RandomState(0).randn(...)`, `default_rng().random((n, m))`
            q = f"numpy.random.{func.attr.value}"
    if q is None:
        return None
    if q in _WRAPPERS:
        return array_size(pos[0], names, consts) if pos else None
    if q in _SHAPE_ARG:
        index, key = _SHAPE_ARG[q]
        if index == -1:
            size = 1
            for p in pos:
                v = int_value(p, consts)
                if v is None:
                    return None
                size *= v
            return (size, q) if pos else None
        shape = kws.get(key) if key in kws else (pos[index] if index < len(pos) else None)
        if shape is None:
            return None
        size = shape_size(shape, consts)
        return None if size is None else (size, q)
    short = q.rsplit(".", 1)[-1]
    if q.startswith(("jax.numpy.", "numpy.")) and q.count(".") == q.startswith("jax.") + 1:
        if short in ("eye", "identity") and pos:
            n = int_value(pos[0], consts)
            m = int_value(pos[1], consts) if short == "eye" and len(pos) > 1 else n
            if n is None or m is None:
                return None
            return n * m, q
        if short == "arange" and pos:
            vals = [int_value(p, consts) for p in pos[:3]]
            if any(v is None for v in vals) or (len(vals) == 3 and vals[2] == 0):
                return None
            return len(range(*vals)), q
        if short == "linspace" and len(pos) >= 2:
            num = kws.get("num", pos[2] if len(pos) > 2 else None)
            n = 50 if num is None else int_value(num, consts)
            return None if n is None else (n, q)
    return None


def is_numpy_array(e: cst.BaseExpression, names, consts: Mapping[str, int]) -> bool:
    """The sized array `e` builds (see `array_size`) is a NumPy array, not converted with
    `jnp.asarray`/`jax.device_put`."""
    if isinstance(e, cst.Attribute):
        return is_numpy_array(e.value, names, consts)
    if isinstance(e, cst.UnaryOperation):
        return is_numpy_array(e.expression, names, consts)
    if isinstance(e, cst.BinaryOperation):
        sides = [s for s in (e.left, e.right) if array_size(s, names, consts) is not None]
        return bool(sides) and all(is_numpy_array(s, names, consts) for s in sides)
    if not isinstance(e, cst.Call):
        return False
    func = e.func
    if isinstance(func, cst.Attribute) and func.attr.value in _SIZE_METHODS and isinstance(func.value, (cst.Call, cst.Attribute)):
        return is_numpy_array(func.value, names, consts)
    q = names.qualify(func)
    if q is None or (q not in _SHAPE_ARG and isinstance(func, cst.Attribute) and func.attr.value in _GENERATOR_METHODS):
        head = func
        while isinstance(head, (cst.Attribute, cst.Call)):
            head = head.value if isinstance(head, cst.Attribute) else head.func
        return not (isinstance(head, cst.Name) and names.qualify(head) not in (None, head.value) and names.qualify(head).startswith("jax"))
    return q.startswith("numpy.")
