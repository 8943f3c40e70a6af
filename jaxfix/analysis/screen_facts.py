"""Small stdlib-AST facts the trace screen reads about parameters, calls and classes: which
parameters admit no array, which arguments a call may pass, which literal `static_argnums`/
`static_argnames` a transform names, which `__init__` fields hold Python data. Split from
`trace_screen`; each mirrors a `jit_contexts`/`traced` decision named in its docstring."""

from __future__ import annotations

import ast

from jaxfix.analysis import astscan
from jaxfix.analysis.jit_contexts import BODY_KEYWORDS
from jaxfix.analysis.screen_function import ScreenFunction, body_facts
from jaxfix.analysis.static_values import (
    ALWAYS_PYTHON_GENERICS,
    CONTAINER_GENERICS,
    PYTHON_ANNOTATIONS,
)
from jaxfix.analysis.transforms import OPTION_DISPLAYS, STATIC_ARGNAMES_OPTIONS, STATIC_ARGNUMS_OPTIONS


def init_python_fields(cls: ast.ClassDef, qualify) -> set[str]:
    """`self.num_stages = num_stages` in `__init__` from a parameter annotated as admitting no
    array, and no other assignment of `self.num_stages` in any method of the class
    (`JitContexts.init_python_fields` on the stdlib AST; a statement with a tuple target counts
    as another assignment of each attribute in it)."""
    plain_of: dict[str, bool] = {}
    for fn in cls.body:
        if type(fn) is not ast.FunctionDef and type(fn) is not ast.AsyncFunctionDef:
            continue
        a = fn.args
        params = [*a.posonlyargs, *a.args]
        if not params:
            continue
        receiver = params[0].arg
        python: set[str] = set()
        if fn.name == "__init__":
            python = {
                p.arg for p in (*params, *a.kwonlyargs) if p.annotation and admits_no_array(p.annotation, qualify)
            }
        for st in astscan.statements(fn):
            kind = type(st)
            if kind is ast.Assign:
                targets = list(st.targets)
                plain = type(st.value) is ast.Name and st.value.id in python
            elif kind is ast.AugAssign or kind is ast.AnnAssign:
                targets, plain = [st.target], False
            else:
                continue
            if any(type(t) is not ast.Attribute for t in targets):
                plain = False  # `self.a, self.b = ...`: never plain (the analysis: not after one)
            while targets:
                t = targets.pop()
                if type(t) is ast.Tuple or type(t) is ast.List:
                    targets.extend(t.elts)
                elif type(t) is ast.Starred:
                    targets.append(t.value)
                elif type(t) is ast.Attribute and type(t.value) is ast.Name and t.value.id == receiver:
                    plain_of[t.attr] = plain_of.get(t.attr, True) and plain
    return {attr for attr, plain in plain_of.items() if plain}


def returns_python(info: ScreenFunction) -> bool:
    """Every `return` of the property `info` gives a value the analysis calls Python with `self`
    traced (`JitContexts._returns_static`): read with the screen's names traced from `self` on."""
    node = info.node
    if not info.positional or type(node) is ast.Lambda:
        return False
    facts = body_facts(node)
    values = [n.value for n in facts.own if type(n) is ast.Return and n.value is not None]
    if not values:
        return False
    env = {info.positional[0]}
    changed = True
    while changed:
        before = len(env)
        for n in facts.bindings:
            env.update(info._bound_traced(n, env))
        changed = len(env) != before
    return not any(info._expr(v, env) for v in values)


def param_names(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    a = node.args
    names = {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    names.update(p.arg for p in (a.vararg, a.kwarg) if p is not None)
    return names


def rooted_at_param(expr: ast.AST, info: ScreenFunction) -> bool:
    """`model`, `self.model`, `cfg.net` whose head is a parameter of `info` its body never rebinds
    (`JitContexts.rooted_at_param`)."""
    while type(expr) is ast.Attribute:
        expr = expr.value
    return type(expr) is ast.Name and expr.id in info.params and expr.id not in body_facts(info.node).assigned


def admits_no_array(annotation: ast.AST, qualify) -> bool:
    """`static_values.admits_no_array` on the stdlib AST: `int`, `bool | None`, `tuple[int, ...]`,
    `Callable[...]`... admit only Python values."""
    kind = type(annotation)
    if kind is ast.BinOp and type(annotation.op) is ast.BitOr:
        return admits_no_array(annotation.left, qualify) and admits_no_array(annotation.right, qualify)
    if kind is ast.Subscript:
        base = qualify(annotation.value)
        if base in ALWAYS_PYTHON_GENERICS:
            return True
        if base not in CONTAINER_GENERICS:
            return False
        index = annotation.slice
        if type(index) is ast.Tuple:
            if index.elts and index.col_offset != index.elts[0].col_offset:
                return False  # `tuple[(int, str)]`: one element, a tuple (libcst's reading)
            elements = index.elts
        else:
            elements = [index]
        if not elements or any(type(e) is ast.Slice for e in elements):
            return False
        return all(
            (type(e) is ast.Constant and e.value is Ellipsis) or admits_no_array(e, qualify) for e in elements
        )
    if kind is ast.Name or kind is ast.Attribute:
        return qualify(annotation) in PYTHON_ANNOTATIONS
    # `int | None`: libcst's `None` is a name, qualified to "None"; a string annotation is no name
    return kind is ast.Constant and annotation.value is None


def may_pass(call: ast.Call, param: str, index: int | None) -> bool:
    """Could `call` pass `param` (by keyword, at `index` or later positionally, or through `*`/`**`)?"""
    if any(k.arg is None or k.arg == param for k in call.keywords):
        return True
    if any(isinstance(a, ast.Starred) for a in call.args):
        return True
    # a method called on an instance shifts by one; counting from index - 1 covers both
    return index is not None and len(call.args) >= index


def positional(call: ast.Call) -> list[ast.AST]:
    return [a for a in call.args if not isinstance(a, ast.Starred)]


def body_args(call: ast.Call, positions: tuple[int, ...]) -> list[ast.AST]:
    pos = positional(call)
    out: list[ast.AST] = []
    for i in positions:
        if i == -1:
            if len(pos) > 1 and isinstance(pos[1], (ast.List, ast.Tuple)):
                out.extend(pos[1].elts)
        elif i < len(pos):
            out.append(pos[i])
    out.extend(k.value for k in call.keywords if k.arg in BODY_KEYWORDS)
    return out


def statics(call: ast.Call | None, info: ScreenFunction, offset: int = 0) -> set[str]:
    """Parameters named by literal `static_argnums`/`static_argnames` of a jit call (`offset`:
    leading parameters the jitted callable has bound, 1 for a bound method)."""
    if call is None:
        return set()
    out: set[str] = set()
    for kw in call.keywords:
        values = kw.value.elts if type(kw.value).__name__ in OPTION_DISPLAYS else [kw.value]
        if not all(isinstance(v, ast.Constant) for v in values):
            continue
        if kw.arg in STATIC_ARGNAMES_OPTIONS:
            out.update(v.value for v in values if isinstance(v.value, str))
        elif kw.arg in STATIC_ARGNUMS_OPTIONS:
            out.update(
                info.positional[v.value + offset]
                for v in values
                if type(v.value) is int and 0 <= v.value + offset < len(info.positional)
            )
    return out
