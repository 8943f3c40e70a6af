"""Attributes read under a trace on a persistent instance: one the traced function closes over.

A pytree passed to `jit` / `vmap` / `scan` (as an argument, `self` of a filtered method, a carry)
is rebuilt from its leaves inside the trace: whatever the trace caches in its `__dict__` dies with
that copy. Only an instance the traced code *closes over* is the caller's own object, kept after
the trace: a `functools.cached_property` first read there stores a tracer on it (measured,
jax 0.10.2: the next read raises `UnexpectedTracerError`). JAX101 needs this evidence on a pytree
that is not a Flax NNX graph object (ten spent pools: 0 real of 45 findings without it).

`persistent_reads(ctx)`: class name -> the attribute names read, in a traced function of the file,
on a name the function does not bind and that is, where it is bound, an instance of that class
built or held outside any trace: `self` of an untraced method of the class (`jax.jit(lambda x:
self.norm * x)`), a parameter of an untraced function annotated with the class, a local of an
untraced function or a module-level name assigned `Cls(...)`; and what a method or property of
the class called on such an instance reads on `self`. Anything else (an argument of the
traced function, a name bound in traced code, an unannotated parameter) is not evidence.
"""

from __future__ import annotations

import libcst as cst

from jaxfix.analysis.jit_contexts import FuncInfo, JitContexts, jit_contexts
from jaxfix.analysis.walk import statements


def persistent_reads(ctx) -> dict[str, frozenset[str]]:
    """Class name (as written in this file) -> attribute names read on a persistent instance of
    it under a trace (memoised per file)."""
    return ctx.fact(("jaxfix.analysis.persistent_reads", "reads"), _compute)


def _compute(ctx) -> dict[str, frozenset[str]]:
    jc: JitContexts = ctx.fact(JitContexts, jit_contexts)
    found: dict[str, set[str]] = {}
    followed: set[FuncInfo] = set()
    for info in jc.traced_functions():
        for attr in jc.own_nodes(info, cst.Attribute):
            if isinstance(attr.value, cst.Name) and (cls := _persistent_class(jc, info, attr.value.value)):
                _read(jc, cls, attr.attr.value, found, followed)
        for call in jc.own_nodes(info, cst.Call):
            # `spring(x)` on a persistent instance runs its `__call__` on it
            if isinstance(call.func, cst.Name) and (cls := _persistent_class(jc, info, call.func.value)):
                _read(jc, cls, "__call__", found, followed)
    return {cls: frozenset(names) for cls, names in found.items()}


def _read(jc: JitContexts, cls: str, name: str, found: dict[str, set[str]], followed: set[FuncInfo]) -> None:
    """`name` read on a persistent `cls` instance; a method or property of the class by that name
    runs on the same instance, so what it reads on `self` is read there too (`dist.log_prob(x)`
    reading `self.log_scale`, google-deepmind/distrax issue 162)."""
    found.setdefault(cls, set()).add(name)
    method = jc.method_of(cls, name)
    if method is None or method in followed or not method.positional:
        return
    followed.add(method)
    own = method.positional[0]
    for attr in jc.own_nodes(method, cst.Attribute):
        if isinstance(attr.value, cst.Name) and attr.value.value == own:
            _read(jc, cls, attr.attr.value, found, followed)


def _persistent_class(jc: JitContexts, info: FuncInfo, name: str) -> str | None:
    """The class of the instance `name` names in traced `info` when `info` closes over it and it
    is bound outside any trace; None when that cannot be told."""
    if name in info.params or name in jc.locals_of(info):
        return None  # an argument of the trace (rebuilt from leaves) or built inside it
    scope = info.parent
    while scope is not None:
        if name in scope.params or name in jc.locals_of(scope):
            if scope.in_trace:
                return None  # bound in traced code: maybe a traced copy itself
            if name in scope.params:
                if scope.is_method and scope.positional and scope.positional[0] == name:
                    return scope.class_name
                return scope.class_annotations.get(name)
            return _built_as(scope.node.body, name)
        scope = scope.parent
    if name in jc.instances and name not in jc.module_funcs:
        return jc.instances[name]
    return None


def _built_as(body: cst.BaseSuite, name: str) -> str | None:
    """`Cls` when the one assignment of `name` among the statements under `body` is `name =
    Cls(...)` (a class called by its plain name)."""
    built = None
    for stmt in statements(body):
        if not isinstance(stmt, cst.Assign):
            continue
        targets = [t.target for t in stmt.targets]
        if not any(isinstance(t, cst.Name) and t.value == name for t in targets):
            continue
        if built is not None or len(targets) != 1:
            return None
        value = stmt.value
        if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
            return None
        built = value.func.value
    return built
