"""Sites inside traced code, for the rules about what runs at trace time (JAX4xx).

Built on `jit_contexts` (which functions run under a trace, with which parameters traced) and
`traced` (which expressions are traced at a statement); this module adds nothing to either, only
the walks several rules share:

- `own_sites(info)`: every node of a traced function's own body (not nested functions, lambdas or
  classes, which are functions of their own, nor tokens: whitespace, comments, operators, brackets,
  `walk.TOKEN_TYPES`) with the innermost statement holding it, so that
  `info.facts.traced(expr, stmt)` answers for the state just before that statement;
- `ArrayEvidence`: whether a local name of a traced function holds a JAX array (not a Python list,
  dict or NumPy array) by the evidence in the function: how it is bound, annotated and used.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

import libcst as cst

from jaxfix.analysis.jit_contexts import FuncInfo
from jaxfix.analysis.pytree_fields import names_array_type
from jaxfix.analysis.traced import FunctionFacts, is_staged_call_name
from jaxfix.analysis.walk import NOT_TOKEN, walk

_NESTED_SCOPES = frozenset({cst.FunctionDef, cst.Lambda, cst.ClassDef})  # concrete: a type test is `isinstance`


def own_sites(info: FuncInfo, ctx=None) -> Iterator[tuple[cst.CSTNode, cst.CSTNode | None]]:
    """(node, innermost statement holding it) for the function's own body, in source order, tokens
    left out (more than half the nodes; no rule reports one). With the rule context `ctx`,
    computed once per function for all the rules of a file."""
    if ctx is not None:
        return iter(ctx.fact(("trace_sites.own_sites", id(info.node)), lambda _ctx: list(own_sites(info))))
    facts = info.facts
    node = info.node
    if facts is None:
        return iter(())
    found = _OwnSites(node, facts.before)
    walk(node.body, found)
    return iter(found.out)


class _OwnSites(cst.CSTVisitor):
    """`own_sites`' walk (one class: a class made per function cost its creation, ABCMeta's, each time)."""

    tokens_unseen = True  # `walk` leaves tokens out: no site is one, and no statement of `before`

    def __init__(self, node: cst.CSTNode, before) -> None:
        self.node = node
        self.before = before  # the function's statements (`FunctionFacts.before`)
        self.stmts: list[cst.CSTNode] = []
        self.out: list[tuple[cst.CSTNode, cst.CSTNode | None]] = []

    def on_visit(self, n: cst.CSTNode) -> bool:
        kind = type(n)
        if not NOT_TOKEN[kind]:
            return False
        if kind in _NESTED_SCOPES and n is not self.node:
            return False
        if n in self.before:
            self.stmts.append(n)
        self.out.append((n, self.stmts[-1] if self.stmts else None))
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if original_node in self.before and self.stmts and self.stmts[-1] is original_node:
            self.stmts.pop()


# Methods and attributes that exist on arrays (and are unusual on lists and dicts).
ARRAY_ATTRS = frozenset(
    {"shape", "ndim", "dtype", "size", "at", "T", "astype", "reshape", "ravel", "flatten", "squeeze", "transpose",
     "block_until_ready", "mT", "swapaxes", "real", "imag", "conj", "clip", "cumsum", "argmax", "argmin"}
)
# Methods of an array that return an array.
ARRAY_METHODS = frozenset(
    {"astype", "reshape", "ravel", "flatten", "squeeze", "transpose", "copy", "clip", "sum", "mean", "max", "min",
     "prod", "cumsum", "conj", "swapaxes", "round", "set", "add", "subtract", "multiply", "divide", "power", "get",
     "apply"}
)


def is_array_annotation(ann: cst.BaseExpression, qualify) -> bool:
    """`ann` (a parameter's annotation) names an array type: `jax.Array`, `Float[Array, "n"]`,
    `"ArrayLike"` (`pytree_fields.ARRAY_ANNOTATIONS`, by its last name)."""
    if isinstance(ann, cst.Subscript):
        ann = ann.value
    if isinstance(ann, cst.SimpleString):
        text = ann.evaluated_value or ""
    else:
        text = qualify(ann) or ""
    return names_array_type(text)


CONTAINER_METHODS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "keys", "items", "values", "update", "setdefault",
     "get", "popitem", "sort", "reverse"}
)
# Calls that build a Python container: a value they make is never an array (`_is_display`).
DISPLAY_CALLS = frozenset({"list", "dict", "set", "tuple", "sorted", "defaultdict", "OrderedDict", "bytearray"})


class ArrayEvidence:
    """Which local names of one traced function hold JAX arrays, by the evidence in the function.

    Only names bound in the function count (parameters and locals; not globals or closures). A
    name is *not* an array when any binding of it is a list, dict, set, tuple or string display,
    a comprehension, `list(...)`/`dict(...)`, or a NumPy call; when it is used like a list or
    dict (`x.append`, `x.items()`, `x["key"]`, `x[0]["key"]`: `string_keyed_root`); or when it is a parameter annotated with a
    non-array type. Otherwise it is one when it is used like an array (`x.shape`, `x.at`,
    `x.astype(...)`), or when every binding is a traced parameter (the analysis treats traced
    parameters as arrays; a list or dict passed to `jit` shows itself by its use) or a JAX-array
    expression: a `jax.numpy`/`lax` call (also unpacked, `q, r = jnp.linalg.qr(m)`), arithmetic
    on an array, an array method, or another such name.
    """

    def __init__(self, info: FuncInfo, names) -> None:
        self.info = info
        self.names = names
        self.facts: FunctionFacts = info.facts
        # name -> bindings: a Param, an expression, ("unpack", expr) for a tuple target, or None (unknown)
        self.bindings: dict[str, list] = {}
        self.used_as_array: set[str] = set()
        self.used_as_container: set[str] = set()
        self._collect()
        self._memo: dict[str, bool] = {}

    def _collect(self) -> None:
        root = self.info.node
        bindings = self.bindings
        used = self.used_as_array
        container = self.used_as_container

        def bind(target: cst.BaseExpression, value, unpacked: bool = False) -> None:
            if isinstance(target, cst.Name):
                bindings.setdefault(target.value, []).append(("unpack", value) if unpacked and value is not None else value)
            elif isinstance(target, (cst.Tuple, cst.List)):
                for el in target.elements:
                    bind(el.value, value, True)
            elif isinstance(target, cst.StarredElement):
                bind(target.value, None)

        class V(cst.CSTVisitor):
            def on_visit(self, n: cst.CSTNode) -> bool:
                if n is not root and isinstance(n, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
                    return False
                if isinstance(n, cst.Assign):
                    for t in n.targets:
                        bind(t.target, n.value)
                elif isinstance(n, cst.AnnAssign) and isinstance(n.target, cst.Name) and n.value is not None:
                    bind(n.target, n.value)
                elif isinstance(n, cst.AugAssign) and isinstance(n.target, cst.Name) and _is_display(n.value):
                    bind(n.target, n.value)  # `x += [v]`: a list
                elif isinstance(n, (cst.For, cst.CompFor)):
                    bind(n.target, None)
                elif isinstance(n, cst.WithItem) and n.asname is not None:
                    bind(n.asname.name, None)
                elif isinstance(n, cst.NamedExpr):
                    bind(n.target, n.value)
                elif isinstance(n, cst.Attribute) and isinstance(n.value, cst.Name):
                    if n.attr.value in ARRAY_ATTRS:
                        used.add(n.value.value)
                    elif n.attr.value in CONTAINER_METHODS:
                        container.add(n.value.value)
                elif isinstance(n, cst.Subscript):
                    keyed = string_keyed_root(n)
                    if keyed is not None:
                        container.add(keyed)  # `d["key"]`, `state[0]["key"]`: a dict, or a container of one
                return True

        walk(root, V())
        params = root.params
        for p in (*params.posonly_params, *params.params, *params.kwonly_params):
            bindings.setdefault(p.name.value, []).insert(0, p)

    def is_array(self, name: str) -> bool:
        if name not in self._memo:
            self._memo[name] = True  # while deciding (`x = x * 2`): a self-reference adds no evidence
            self._memo[name] = self._decide(name)
        return self._memo[name]

    def _decide(self, name: str) -> bool:
        values = self.bindings.get(name)
        if values is None:
            return False  # not bound here: a closure variable or a global
        exprs = [v[1] if isinstance(v, tuple) else v for v in values]
        if any(isinstance(v, cst.BaseExpression) and (_is_display(v) or self._numpy_value(v)) for v in exprs):
            return False
        if name in self.used_as_container or self.facts.is_sequence(cst.Name(name)):
            return False
        for v in values:
            if isinstance(v, cst.Param) and v.annotation is not None:
                if not self._array_annotation(v.annotation.annotation):
                    return False
        if name in self.used_as_array:
            return True
        for v in values:
            if isinstance(v, cst.Param):
                if name not in self.facts.entry_traced:
                    return False
            elif isinstance(v, tuple):
                if not (isinstance(v[1], cst.Call) and is_staged_call_name(self.names.qualify(v[1].func))):
                    return False
            elif v is None or not self.array_expr(v):
                return False
        return True

    def _numpy_value(self, e: cst.BaseExpression) -> bool:
        return isinstance(e, cst.Call) and (self.names.qualify(e.func) or "").startswith("numpy.")

    def _array_annotation(self, ann: cst.BaseExpression) -> bool:
        return is_array_annotation(ann, self.names.qualify)

    def array_expr(self, e: cst.BaseExpression) -> bool:
        """Is `e` (anywhere in the function) a JAX array expression?"""
        if isinstance(e, cst.Name):
            return self.is_array(e.value)
        if isinstance(e, cst.Call):
            qual = self.names.qualify(e.func)
            if is_staged_call_name(qual):
                return True
            if isinstance(e.func, cst.Attribute) and e.func.attr.value in ARRAY_METHODS:
                inner = e.func.value
                if isinstance(inner, cst.Subscript) and isinstance(inner.value, cst.Attribute) and inner.value.attr.value == "at":
                    return True
                return self.array_expr(inner)
            return False
        if isinstance(e, cst.BinaryOperation):
            if _is_display(e.left) or _is_display(e.right):
                return False
            return self.array_expr(e.left) or self.array_expr(e.right)
        if isinstance(e, cst.UnaryOperation):
            return self.array_expr(e.expression)
        if isinstance(e, cst.Attribute) and e.attr.value in ("T", "mT", "real", "imag"):
            return self.array_expr(e.value)
        if isinstance(e, cst.Subscript) and not any(
            isinstance(el.slice, cst.Index) and _is_display(el.slice.value) for el in e.slice
        ):
            return self.array_expr(e.value)  # `m[0]`: part of an array
        return False


def string_keyed_root(sub: cst.Subscript) -> str | None:
    """`x` for `x["k"]`, `x[0]["k"]`, `x[i][j]["k"]`: a subscript chain from a name that indexes
    with a string somewhere. An array indexed by integers or slices gives an array, and an array
    indexed by a string raises, so `x` (and every link before the string) is a container: a
    dict, or a list/tuple/dict holding one (mlech26l/gigastep
    @6288d650:third-party-learning/purejax/ippo.py `state[0]["stacked_obs"][self.pointer] = obs`,
    a list of observations). `string_keyed_root_ast` is the same test on the stdlib AST."""
    keyed = False
    node: cst.BaseExpression = sub
    while isinstance(node, cst.Subscript):
        keyed = keyed or any(isinstance(el.slice, cst.Index) and _is_string(el.slice.value) for el in node.slice)
        node = node.value
    return node.value if keyed and isinstance(node, cst.Name) else None


def string_keyed_root_ast(sub: ast.Subscript) -> str | None:
    """`string_keyed_root` on the stdlib AST (a tuple index is one key, as libcst's parenthesized
    tuple is: only a bare string counts)."""
    keyed = False
    node: ast.AST = sub
    while type(node) is ast.Subscript:
        key = node.slice
        keyed = keyed or (type(key) is ast.Constant and isinstance(key.value, (str, bytes))) or type(key) is ast.JoinedStr
        node = node.value
    return node.id if keyed and type(node) is ast.Name else None


def _is_string(e: cst.BaseExpression) -> bool:
    return isinstance(e, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))


def _is_display(e: cst.BaseExpression) -> bool:
    if isinstance(e, (cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.DictComp, cst.SetComp,
                      cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return True
    return isinstance(e, cst.Call) and isinstance(e.func, cst.Name) and e.func.value in DISPLAY_CALLS
