"""Names that certainly hold a JAX array in code that runs eagerly: every binding of the name in
its function is a `jax.numpy` array constructor (`out = jnp.zeros((n, d))`).

An item store into such a name (`out[:, :k] = sin`) raises `TypeError: JAX arrays are immutable`
whether or not anything traces the function (measured, jax 0.4-0.8: `jnp.zeros(3)[0] = 1.0`
raises eagerly too). Traced code has its own, wider evidence (`trace_sites.ArrayEvidence`); this
is the narrow fact for the code around it, where a parameter or a name bound to anything else
may be a NumPy array and is never taken for a JAX one. The same decision on libcst (the rule)
and on the stdlib AST (its screen).
"""

from __future__ import annotations

import ast

import libcst as cst

# `jax.numpy` functions that always return a new `jax.Array`, whatever their arguments
ARRAY_CONSTRUCTORS = frozenset(
    f"jax.numpy.{name}"
    for name in (
        "zeros", "ones", "full", "empty", "zeros_like", "ones_like", "full_like", "empty_like",
        "array", "asarray", "arange", "linspace", "logspace", "eye", "identity", "tri",
        "concatenate", "stack", "hstack", "vstack", "copy",
    )
)


def eager_array_names(func: ast.FunctionDef | ast.AsyncFunctionDef, qualify) -> set[str]:
    """The names of `func` (stdlib AST) every binding of which, in its own body (nested scopes
    left out), is a call of an `ARRAY_CONSTRUCTORS` function; parameters never are."""
    bindings: dict[str, list[ast.AST | None]] = {}
    args = func.args
    for p in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
        if p is not None:
            bindings.setdefault(p.arg, []).append(None)

    def bind(target: ast.AST, value: ast.AST | None) -> None:
        if type(target) is ast.Name:
            bindings.setdefault(target.id, []).append(value)
        elif type(target) in (ast.Tuple, ast.List):
            for el in target.elts:
                bind(el.value if type(el) is ast.Starred else el, None)
        elif type(target) is ast.Starred:
            bind(target.value, None)

    stack: list[ast.AST] = list(func.body)
    while stack:
        n = stack.pop()
        kind = type(n)
        if kind in (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda):
            if kind is not ast.Lambda:
                bindings.setdefault(n.name, []).append(None)
            continue
        if kind is ast.Assign:
            for t in n.targets:
                bind(t, n.value)
        elif kind is ast.AnnAssign or kind is ast.AugAssign:
            if type(n.target) is ast.Name:
                bind(n.target, None)  # `x += v` rebinds through `__iadd__`: not a constructor call
        elif kind in (ast.For, ast.AsyncFor, ast.comprehension):
            bind(n.target, None)
        elif kind is ast.withitem and n.optional_vars is not None:
            bind(n.optional_vars, None)
        elif kind is ast.NamedExpr:
            bind(n.target, n.value)
        elif kind in (ast.Global, ast.Nonlocal):
            for name in n.names:
                bindings.setdefault(name, []).append(None)
        elif kind in (ast.Import, ast.ImportFrom):
            for alias in n.names:
                bindings.setdefault((alias.asname or alias.name).split(".")[0], []).append(None)
        elif kind is ast.ExceptHandler and n.name:
            bindings.setdefault(n.name, []).append(None)
        stack.extend(ast.iter_child_nodes(n))
    return {
        name
        for name, values in bindings.items()
        if any(type(v) is ast.Call and qualify(v.func) in ARRAY_CONSTRUCTORS for v in values)
        and all(type(v) is ast.Call and (qualify(v.func) in ARRAY_CONSTRUCTORS or _at_update(v.func)) for v in values)
    }


def _at_update(func: ast.AST) -> bool:
    """`x.at[i].set` (any method): the updated copy of a JAX array is one too."""
    return (
        type(func) is ast.Attribute
        and type(func.value) is ast.Subscript
        and type(func.value.value) is ast.Attribute
        and func.value.value.attr == "at"
    )


def eager_array_names_cst(func: cst.FunctionDef, qualify) -> set[str]:
    """`eager_array_names` on libcst, the same bindings: the rule decides as its screen does."""
    bindings: dict[str, list[cst.CSTNode | None]] = {}
    params = func.params
    for p in (*params.posonly_params, *params.params, *params.kwonly_params):
        bindings.setdefault(p.name.value, []).append(None)
    for star in (params.star_arg, params.star_kwarg):
        if isinstance(star, cst.Param):
            bindings.setdefault(star.name.value, []).append(None)

    def bind(target: cst.BaseExpression, value: cst.BaseExpression | None) -> None:
        if isinstance(target, cst.Name):
            bindings.setdefault(target.value, []).append(value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for el in target.elements:
                bind(el.value, None)
        elif isinstance(target, cst.StarredElement):
            bind(target.value, None)

    class V(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            if n is not func and isinstance(n, (cst.FunctionDef, cst.ClassDef)):
                bindings.setdefault(n.name.value, []).append(None)
                return False
            if isinstance(n, cst.Lambda):
                return False
            if isinstance(n, cst.Assign):
                for t in n.targets:
                    bind(t.target, n.value)
            elif isinstance(n, (cst.AnnAssign, cst.AugAssign)):
                bind(n.target, None) if isinstance(n.target, cst.Name) else None
            elif isinstance(n, (cst.For, cst.CompFor)):
                bind(n.target, None)
            elif isinstance(n, cst.WithItem) and n.asname is not None:
                bind(n.asname.name, None)
            elif isinstance(n, cst.NamedExpr):
                bind(n.target, n.value)
            elif isinstance(n, (cst.Global, cst.Nonlocal)):
                for item in n.names:
                    bindings.setdefault(item.name.value, []).append(None)
            elif isinstance(n, (cst.Import, cst.ImportFrom)) and not isinstance(n.names, cst.ImportStar):
                for alias in n.names:
                    bound = alias.asname.name if alias.asname is not None else alias.name
                    text = bound.value if isinstance(bound, cst.Name) else cst.Module([]).code_for_node(bound)
                    bindings.setdefault(text.split(".")[0], []).append(None)
            elif isinstance(n, cst.ExceptHandler) and n.name is not None:
                bind(n.name.name, None)
            return True

    func.visit(V())
    return {
        name
        for name, values in bindings.items()
        if any(isinstance(v, cst.Call) and qualify(v.func) in ARRAY_CONSTRUCTORS for v in values)
        and all(isinstance(v, cst.Call) and (qualify(v.func) in ARRAY_CONSTRUCTORS or _at_update_cst(v.func)) for v in values)
    }


def _at_update_cst(func: cst.BaseExpression) -> bool:
    return (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Subscript)
        and isinstance(func.value.value, cst.Attribute)
        and func.value.value.attr.value == "at"
    )
