"""Factories of jitted functions, called once per trip of a loop.

A module function that returns a new compiled function on every call (`def make_step(lr):` with
a nested `@jax.jit def step(x)` it returns, or `return jax.jit(lambda x: ...)`) hands out a new
cache key each time. Called inside a loop with arguments the loop does not change, every trip
traces and compiles again a function that did not change (#33: "a wrapper that returns a jitted
closure"). Calls whose arguments change per trip (a new learning rate, a new model size) compile
once per configuration by nature, and are left alone, as are factories memoised with
`functools.cache`/`lru_cache` and calls in code that already runs under a trace (inlined).

`screen_admits` is the stdlib screen (a factory and a call of it by name in a loop, loosely);
`factory_calls` decides on the libcst tree.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

import libcst as cst

from codemods.jit_placement.per_configuration import same_values_per_trip
from codemods.jit_placement.sites import runs_under_trace
from codemods.jit_placement.transform_kinds import COMPILING, NEW_FUNCTION_WRAPPERS, PARTIALS, WRAPPING
from jaxfix.analysis import astscan
from jaxfix.analysis.local_calls import calls_named
from jaxfix.analysis.names import ImportMap
from jaxfix.analysis.scopes import ScopeIndex
from jaxfix.analysis.screen_function import body_facts
from jaxfix.analysis.static_helpers import is_memoised
from jaxfix.analysis.walk import own_returns
from jaxfix.rulebase import RuleContext

_COMPILING_LAST = frozenset(name.rpartition(".")[2] for name in COMPILING)


@dataclass(frozen=True)
class FactoryCall:
    """`call` of the module function `factory` inside a loop; `made` says which jitted function it
    returns new each time ("function `step`", or "function")."""

    call: cst.Call
    factory: str
    made: str


def screen_admits(tree: ast.Module) -> bool:
    """Loosely, on the stdlib AST: a module function whose body calls a compiling transform or
    decorates a nested def with one (found by last name, `jit`, `pmap`, `filter_jit`, then qualified
    through the imports; its own decorators do not count: a jitted function called in a loop is no
    factory), and a call of that function by name on the lines of a loop. Every file `factory_calls` finds something in passes. Reads the
    lists `astscan` keeps of the module's nodes: no walk of its own (most files stop at the first
    test, a jit call inside a module function being rare)."""
    defs = [st for st in tree.body if type(st) is ast.FunctionDef]
    if not defs:
        return False
    jits: list[ast.AST] = list(astscan.calls_named(tree, _COMPILING_LAST, _COMPILING_LAST))
    jits += [d for d in _nested_jit_decorated(tree)]
    if not jits:
        return False
    # qualified through the imports as the rules read them (`from jax._src import api; api.jit` is
    # jax's own internals, no transform)
    qualify = ImportMap.from_ast(tree).qualify_ast
    lines = [n.lineno for n in jits if _jit_named(n, qualify)]
    factories = {
        st.name
        for st in defs  # each def of a name (the rule takes the factory among them)
        if any(st.body[0].lineno <= line <= st.end_lineno for line in lines) and _may_return_fresh_jits(st, qualify)
    }
    if not factories:
        return False
    calls = [c.lineno for c in astscan.calls(tree) if type(c.func) is ast.Name and c.func.id in factories]
    if not calls:
        return False
    loops = [
        (n.lineno, n.end_lineno)
        for n in astscan.nodes(tree)
        if type(n) in (ast.For, ast.While, ast.AsyncFor, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    ]
    return any(first <= line <= last for line in calls for first, last in loops)


def _may_return_fresh_jits(fn: ast.FunctionDef, qualify) -> bool:
    """`_returns_fresh_jit`, loosely: `fn` has a `return` of its own, and each gives a call or a
    name that a def nested in `fn` decorated with a compiling transform has, or that `fn` binds
    anywhere. flax's `nnx/summary.py` jits inside `_save_call_info`, called in a loop, which
    returns its `@wraps(f)` wrapper: admitted to the libcst check for a factory it is not (#33)."""
    returns = [n for n in body_facts(fn).own if type(n) is ast.Return]
    if not returns:
        return False
    names: set[str] | None = None  # made when a return gives a name
    for ret in returns:
        value = ret.value
        if type(value) is ast.Call:
            continue
        if type(value) is not ast.Name:
            return False
        if names is None:
            names = set()
            for n in ast.walk(fn):
                kind = type(n)
                if (kind is ast.FunctionDef or kind is ast.AsyncFunctionDef) and n is not fn and _jit_named(n, qualify):
                    names.add(n.name)
                elif kind is ast.Name and type(n.ctx) is ast.Store:
                    names.add(n.id)
        if value.id not in names:
            return False
    return True


def _nested_jit_decorated(tree: ast.Module) -> list[ast.AST]:
    """Defs below module level (methods of classes too: the screen may admit more than the rule
    reports) decorated with a compiling transform (`@jax.jit`, `@jax.jit(...)`, `@partial(jax.jit, ...)`)."""
    top = {id(st) for st in tree.body}  # a module function's own decorators make it no factory
    return [
        st
        for st in astscan.statements(tree)
        if (type(st) is ast.FunctionDef or type(st) is ast.AsyncFunctionDef)
        and id(st) not in top
        and any(
            _last_name(d.func if type(d) is ast.Call else d) in _COMPILING_LAST
            or (type(d) is ast.Call and d.args and _last_name(d.args[0]) in _COMPILING_LAST)
            for d in st.decorator_list
        )
    ]


def _jit_named(node: ast.AST, qualify) -> bool:
    """A call of a compiling transform, or a def decorated with one, qualified through the imports."""
    if type(node) is ast.Call:
        return qualify(node.func) in COMPILING
    for d in node.decorator_list:
        target = d.func if type(d) is ast.Call else d
        if qualify(target) in COMPILING:
            return True
        if type(d) is ast.Call and d.args and qualify(d.args[0]) in COMPILING:
            return True
    return False


def _last_name(expr: ast.AST) -> str | None:
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return expr.id if isinstance(expr, ast.Name) else None


def factory_calls(ctx: RuleContext, idx: ScopeIndex) -> list[FactoryCall]:
    """Calls of a factory of this module inside a loop, with arguments the loop does not rebind,
    whose result is called in that loop, outside traced code."""
    factories = {
        st.name.value: made
        for st in ctx.module.body
        if isinstance(st, cst.FunctionDef) and (made := _returns_fresh_jit(st, ctx.names)) is not None
    }
    if not factories:
        return []
    return [
        FactoryCall(call, call.func.value, factories[call.func.value])
        for call in calls_named(ctx.module, factories, methods=False)
        if _per_trip_and_unchanged(ctx, idx, call)
    ]


def _returns_fresh_jit(fn: cst.FunctionDef, names: ImportMap) -> str | None:
    """Which jitted function `fn` returns new on every call ("function `step`") (a nested def decorated with
    a compiling transform, or a compiling transform applied to a lambda, a partial, a nested def
    or a new wrapper such as `jax.grad(f)`), when every `return` of `fn` returns one; None
    otherwise, and for a memoised `fn`."""
    if any(is_memoised(d, names) for d in fn.decorators):
        return None
    nested: dict[str, cst.FunctionDef] = {}
    bound: dict[str, cst.BaseExpression] = {}
    for st in _own_statements(fn):
        if isinstance(st, cst.FunctionDef):
            nested[st.name.value] = st
        elif isinstance(st, cst.SimpleStatementLine):
            for small in st.body:
                if (
                    isinstance(small, cst.Assign)
                    and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                ):
                    bound[small.targets[0].target.value] = small.value
    made = [_fresh_jit(r.value, nested, bound, names) for r in own_returns(fn)]
    return made[0] if made and None not in made else None


def _fresh_jit(value, nested, bound, names: ImportMap) -> str | None:
    if isinstance(value, cst.Name):
        definition = nested.get(value.value)
        if definition is not None:
            return (
                f"function `{value.value}`"
                if any(_compiling_decorator(d.decorator, names) for d in definition.decorators)
                else None
            )
        if value.value in bound:
            return f"function `{value.value}`" if _fresh_jit_call(bound[value.value], nested, names) else None
        return None
    if _fresh_jit_call(value, nested, names):
        return "function"
    return None


def _fresh_jit_call(value, nested, names: ImportMap) -> bool:
    """`jax.jit(<something new per call>)`: a lambda, a partial, a nested def, a new wrapper."""
    if not (isinstance(value, cst.Call) and names.qualify(value.func) in COMPILING and value.args):
        return False
    target = value.args[0].value
    if isinstance(target, cst.Lambda):
        return True
    if isinstance(target, cst.Name):
        return target.value in nested
    if isinstance(target, cst.Call):
        qual = names.qualify(target.func)
        return qual in PARTIALS or WRAPPING.get(qual) in NEW_FUNCTION_WRAPPERS
    return False


def _compiling_decorator(dec: cst.BaseExpression, names: ImportMap) -> bool:
    if names.qualify(dec) in COMPILING:
        return True
    if isinstance(dec, cst.Call):
        qual = names.qualify(dec.func)
        if qual in COMPILING:
            return True  # `@jax.jit(static_argnums=...)` style factories of decorators
        return qual in PARTIALS and bool(dec.args) and names.qualify(dec.args[0].value) in COMPILING
    return False


def _per_trip_and_unchanged(ctx: RuleContext, idx: ScopeIndex, call: cst.Call) -> bool:
    """`call` runs once per trip of a loop that rebinds none of the names in its arguments, its
    result is called in that loop, and no trace runs it."""
    loops = idx.enclosing_loops(call)
    if not loops:
        return False
    if not same_values_per_trip(idx, call.args, loops[0]):
        return False
    if not _result_called(idx, call, loops[0]):
        return False
    return not runs_under_trace(ctx, idx, call)


def _result_called(idx: ScopeIndex, call: cst.Call, loop: cst.CSTNode) -> bool:
    """`F(...)(x)`, or `g = F(...)` with `g` called in the same loop."""
    parent = idx.parent(call)
    if isinstance(parent, cst.Call) and parent.func is call:
        return True
    if isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name):
        return bool(calls_named(loop, {parent.targets[0].target.value}, methods=False))
    return False


def _own_statements(fn: cst.FunctionDef):
    """The statements of `fn`'s body, into compound statements but not into nested defs/classes."""
    # `type(x) is`: libcst's classes are concrete, and `isinstance` against them runs ABCMeta's check
    block = cst.IndentedBlock
    stack = list(reversed(fn.body.body)) if type(fn.body) is block else []
    while stack:
        st = stack.pop()
        yield st
        if type(st) is cst.FunctionDef or type(st) is cst.ClassDef:
            continue
        for attr in ("body", "orelse", "handlers", "finalbody"):
            inner = getattr(st, attr, None)
            kind = type(inner)
            if kind is block:
                stack.extend(inner.body)
            elif (kind is cst.Else or kind is cst.Finally) and type(inner.body) is block:
                stack.extend(inner.body.body)
            elif kind is cst.If:
                stack.append(inner)
            elif isinstance(inner, (list, tuple)):
                for handler in inner:
                    if type(getattr(handler, "body", None)) is block:
                        stack.extend(handler.body.body)
