"""The cached members of a file's pytree classes: what JAX101 and JAX102 report.

`cached_classes(ctx)` walks the file's classes once (memoised through `ctx.fact`) and gives, for
each pytree class (`jaxfix.analysis.pytrees.pytree_classes`) with a cached member, its
`functools.cached_property` methods (JAX101) and its `functools.cache` / `lru_cache` methods
(JAX102). `may_hold_cached_pytree` is the same question asked on the stdlib AST, the rules'
`could_match` screen, and `may_hold_cached_pytree_in` the same with the project index (their
`could_match_in`). `PytreeCacheFamily` holds the settings both rules share.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import Counter
from dataclasses import dataclass

import libcst as cst

from jaxfix.analysis import filememo
from jaxfix.analysis import pytrees as pt
from jaxfix.analysis.static_values import FUNCTION_CACHES
from jaxfix.rulebase import RuleContext

CACHED_PROPERTY = frozenset({"functools.cached_property"})  # (each cache's name is in the text test below)
METHOD_CACHES = FUNCTION_CACHES
# Not keyed on an instance: no tracer stored, no unhashable `self`.
_NOT_ON_INSTANCE = frozenset({"staticmethod", "classmethod"})
_CACHES = CACHED_PROPERTY | METHOD_CACHES


class PytreeCacheFamily:
    """What JAX101 and JAX102 share, mixed into both rules: one options table (the old rule name,
    so `[tool.jaxfix.pytree-cache]` keeps working), the project index (a base class defined in
    another file can make a class a pytree), and the text test: every cache is a `functools` one,
    and its decorator qualifies to `functools.<cache>` only through an import or a dotted name that
    spells the cache's own name (`from functools import lru_cache as memo`, `@ft.cache`)."""

    options_table = "pytree-cache"
    uses_project = True
    prefilter = ("functools",)
    # `\b(?:cache|cached_property|lru_cache)\b`, written to start with a word the regex engine can
    # skip ahead to (35x faster on the corpus; tests/test_prefilter_pattern.py checks they agree)
    prefilter_pattern = re.compile(r"cache(?:(?<=(?<!\w)cache)(?:d_property)?|(?<=(?<!\w)lru_cache))\b")


@dataclass
class CachedMember:
    """A method of a pytree class and the cache decorator on it (`qualname` is what it qualifies to)."""

    func: cst.FunctionDef
    decorator: cst.Decorator
    qualname: str

    @property
    def name(self) -> str:
        return self.func.name.value


@dataclass
class CachedClass:
    """A pytree class with at least one cached member."""

    classdef: cst.ClassDef
    info: pt.PytreeInfo
    properties: list[CachedMember]  # bare `@cached_property` (JAX101)
    methods: list[CachedMember]  # `@cache`, `@lru_cache`, `@lru_cache(...)` (JAX102)


def cached_classes(ctx: RuleContext) -> list[CachedClass]:
    """The file's pytree classes with a cached member, in source order (once per file)."""
    return ctx.fact(("codemods.pytree_cache", "cached_classes"), _find)


def _find(ctx: RuleContext) -> list[CachedClass]:
    classes = pt.pytree_classes(ctx)
    if not classes:
        return []
    names = Counter(name for name, _ in classes)
    # every class, nested ones too, in source order: what a walk of the module's statements finds
    # (a class is a statement), from the file's node index, which the rule's check builds anyway
    classdefs = ctx.tree_index.of_type(cst.ClassDef)
    written = Counter(c.name.value for c in classdefs)
    first: dict[str, pt.PytreeInfo] = {}  # name -> the first class of that name (a search per class was quadratic)
    for (n, _), info in classes.items():
        first.setdefault(n, info)
    found = []
    for classdef in classdefs:
        # the position (which class of that name) is looked up last, and only when the name is
        # not unique: on a large class it costs a render of the class's top-level statement
        name = classdef.name.value
        if name not in names:
            continue
        properties, methods = _cached_members(ctx, classdef)
        if not properties and not methods:
            continue
        if names[name] == 1 and written[name] == 1:
            info = first[name]
        else:
            info = classes.get((name, ctx.keyword_line(classdef)))
        if info is not None:
            found.append(CachedClass(classdef, info, properties, methods))
    return found


def _cached_members(ctx: RuleContext, classdef: cst.ClassDef) -> tuple[list[CachedMember], list[CachedMember]]:
    """A method's first cache decorator decides which list it joins."""
    properties, methods = [], []
    body = classdef.body.body if isinstance(classdef.body, cst.IndentedBlock) else ()
    for stmt in body:
        if not isinstance(stmt, cst.FunctionDef):
            continue
        if {ctx.names.qualify(d.decorator) for d in stmt.decorators} & _NOT_ON_INSTANCE:
            continue
        for dec in stmt.decorators:
            target = dec.decorator.func if isinstance(dec.decorator, cst.Call) else dec.decorator
            name = ctx.names.qualify(target)
            if name in CACHED_PROPERTY and not isinstance(dec.decorator, cst.Call):
                properties.append(CachedMember(stmt, dec, name))
                break
            if name in METHOD_CACHES:
                methods.append(CachedMember(stmt, dec, name))
                break
    return properties, methods


# -- the could_match screen ----------------------------------------------------------------------
def may_hold_cached_pytree(tree: ast.Module, caches: frozenset[str]) -> bool:
    """A stdlib-AST over-approximation of `cached_classes`: some class has a method decorated with
    a name in `caches` and may be a pytree by `pytrees.class_kind`'s rules, with or without a
    project index (`pytrees.PytreeScreen`). Most classes with a cache have no decorator that could
    make them a pytree, no base, and are passed to no registering call: those are rejected."""
    cached, screen = _screen(tree)
    return screen is not None and any(found & caches and screen.may_be_pytree(node) for node, found in cached)


def may_hold_cached_pytree_in(ctx: RuleContext, caches: frozenset[str]) -> bool:
    """`may_hold_cached_pytree` with the run's project index: some class with a decorator in
    `caches` is one `pytrees.pytree_classes(ctx)` reports (`pytrees.has_pytree_class`: those
    classes alone are looked up; the rules' `could_match_in`). A base class or a
    registration helper in another module of the project is looked up there."""
    cached, _ = _screen(ctx.tree)
    if not any(found & caches for _, found in cached):
        return False
    return pt.has_pytree_class(ctx, {node.name for node, found in cached if found & caches})


@functools.lru_cache(maxsize=4)
def _screen(tree: ast.Module) -> tuple[list[tuple[ast.ClassDef, frozenset[str]]], pt.PytreeScreen | None]:
    """The classes with a cache decorator (and which ones) and, when there are any, the pytree
    screen of `tree`: read once for both rules' screens."""
    statements = pt.module_statements(tree)  # shared with the call graph's and the import map's walks
    bindings = pt.module_bindings(tree)
    classes = (node for node in statements if isinstance(node, ast.ClassDef))
    cached = [(node, found) for node in classes if (found := _cache_decorators(node, bindings))]
    return cached, pt.PytreeScreen(tree, statements, bindings) if cached else None


filememo.on_forget(_screen.cache_clear)


def _cache_decorators(node: ast.ClassDef, bindings: dict[str, str]) -> frozenset[str]:
    """`_cached_members` on the stdlib AST: the cache decorators on the methods directly in the
    class body (not static or class methods), as qualified names (`pt.module_bindings` without a
    module name reads imports as `ctx.names` does: relative and star imports bind nothing)."""
    found: set[str] = set()
    for stmt in node.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if {pt.qualify(d, bindings) for d in stmt.decorator_list} & _NOT_ON_INSTANCE:
            continue
        for dec in stmt.decorator_list:
            name = pt.qualify(dec.func if isinstance(dec, ast.Call) else dec, bindings)
            if name in _CACHES:
                found.add(name)
    return frozenset(found)
