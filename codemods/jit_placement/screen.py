"""The jit-placement family's fast screen: where a transform site may run, on the stdlib AST.

`sites(tree)` over-approximates `sites.find_sites` before any libcst parse: every site found
there is among them, with the same answer to "inside a loop?" and "in which function?". Each
rule's `could_match` then asks for a site placed as its code needs (in a loop for
JAX201/JAX203, in the body of a function called repeatedly for JAX202).

Names are qualified with `ImportMap.from_ast`, which reads imports exactly as the rules'
`ctx.names` does (relative and star imports bind nothing), so a call the screen does not
qualify to `jax.jit`/`jax.pmap`/`eqx.filter_jit`/`eqx.filter_pmap` is one the planner never
sees as a transform either (jax's own `from jax._src.api import jit` is not one).
"""

from __future__ import annotations

import ast
import bisect
import weakref
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from codemods.jit_placement.sites import runs_once
from codemods.jit_placement.transform_kinds import (
    COMPILING,
    PARTIALS,
    TRANSFORMS,
    WRAPPING,
)
from jaxfix.analysis import astscan, filememo
from jaxfix.analysis import pytrees as pt
from jaxfix.analysis.names import ImportMap
from jaxfix.analysis.transforms import REWRAPPING_JITS

# Where a node runs, as far as the planner cares: `MODULE` (module-level code), `CLASS` (a class
# body) or the name of the innermost function whose body runs it.
MODULE, CLASS = "", "<class>"
_AST_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_SITE_TYPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef})
_SHORT = frozenset(q.rpartition(".")[2] for q in COMPILING)  # jit, pmap, filter_jit, filter_pmap


@dataclass(frozen=True)
class Where:
    """Where a node runs: `function` is MODULE, CLASS or the enclosing function's name;
    `in_loop` says a loop may run it once per iteration (`ScopeIndex.enclosing_loops` is
    non-empty)."""

    function: str
    in_loop: bool


@dataclass(frozen=True)
class ScreenSite:
    """A transform site the planner may report: `call` for `T(F)(x)` / `f = T(F)`, False for a
    def decorated with `T`; `where` is where it runs."""

    call: bool
    where: Where
    # what it compiles may be the same program on every trip of its loop (`sites.
    # same_computation_per_trip`, which test code needs): not a lambda, a partial, or a call of
    # anything but a plain name, whose site the planner makes per configuration or not at all
    same_per_trip: bool = True

    @property
    def in_loop(self) -> bool:
        return self.where.in_loop

    @property
    def per_call(self) -> bool:
        """Outside loops, in the body of a function that runs more than once: not `__init__`
        (once per instance) and not `main` or a `test*` (`sites.runs_once`)."""
        name = self.where.function
        return not self.where.in_loop and name not in (MODULE, CLASS, "__init__") and not runs_once(name)


_SITES: weakref.WeakKeyDictionary[ast.Module, tuple[ScreenSite, ...]] = weakref.WeakKeyDictionary()


def sites(tree: ast.Module) -> tuple[ScreenSite, ...]:
    """The transform sites of `tree` the planner may report, computed once per tree (the three
    rules of the family screen the same tree one after the other).

    Two passes: a flat walk of the module for a transform call or a def decorated with one
    (`_is_transform_site`); then, only for the top-level statements holding one, a walk that
    knows where each node runs (`_screen_walk`), for the places a site can be (`_could_be_site`).
    """
    found = _SITES.get(tree)
    if found is None:
        found = _SITES[tree] = tuple(_sites(tree))
    return found


def _sites(tree: ast.Module) -> Iterator[ScreenSite]:
    names = ImportMap.from_ast(tree)
    body = tree.body
    # top-level statements' line spans (a decorated def starts at its first decorator)
    starts = [min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))]) for s in body]
    wanted: dict[int, set[int]] = {}  # top-level statement -> ids of the transform sites in it
    lines: dict[int, set[int]] = {}  # top-level statement -> the lines those sites start on
    # the calls spelled as a transform may be (`x.jit(...)`, or a name an import binds to one),
    # and the decorated defs (statements, at any depth)
    compiling = {name for name, target in names.bindings.items() if target in COMPILING}
    spelled = astscan.calls_named(tree, _SHORT, compiling | {name for name in COMPILING if name not in names.bindings})
    candidates = [*spelled, *(s for s in pt.module_statements(tree) if type(s) in _SITE_TYPES and s.decorator_list)]
    for node in candidates:
        if _is_transform_site(node, names):
            line = node.lineno
            index = bisect.bisect_right(starts, line) - 1
            while index >= 0 and body[index].end_lineno >= line:  # statements may share a line
                wanted.setdefault(index, set()).add(id(node))
                lines.setdefault(index, set()).add(line)
                index -= 1
    top = Where(MODULE, False)
    for index, ids in sorted(wanted.items()):
        if ids == {id(body[index])}:  # a decorated def at module level, no other site in it: no walk
            if _could_be_site(body[index], tree):
                yield ScreenSite(False, top)
            continue
        bound: set[str] | None = None  # names bound in the statement, made when first needed
        for node, parent, where in _screen_walk(body[index], tree, top, sorted(lines[index])):
            if id(node) in ids and _could_be_site(node, parent) and _may_be_only_called(tree, body[index], parent):
                if type(node) is not ast.Call:
                    if _def_may_be_only_called(tree, body[index], node, names):
                        yield ScreenSite(False, where)
                    continue
                # Outside loops the planner keeps `T(F)` only for a fresh callable (`_place`,
                # `Site.fresh`); with `F` a name (no transform between), one resolving to a
                # function's scope (a nested def, a local lambda or partial: `_classify`). A name
                # bound nowhere in the top-level statement resolves to the module (a module
                # function: one cache key for every call) or to nothing: the planner leaves both.
                if not where.in_loop and type(node.args[0]) is ast.Name and not _rewraps(node.func, names):
                    bound = astscan.bound_names(body[index]) if bound is None else bound
                    if node.args[0].id not in bound:
                        continue  # outside loops only a fresh callable is a site: a local one (see below)
                yield ScreenSite(True, where, _may_compile_the_same(node, names))


def _may_compile_the_same(call: ast.Call, names: ImportMap) -> bool:
    """Can `sites.same_computation_per_trip` hold, with `Site.fresh`, for the site of transform
    call `call` (what JAX201 reports in test code)? Not when its target, through the transforms
    around it (`_SiteFinder._site_for_call`), is a lambda or a partial (`SiteKinds._classify`:
    one configuration per trip) or a call of anything but a plain name (no site); nor for a plain
    name under the one transform, not a rewrapping one (`jax.jit(step)`): a module function there
    is no fresh callable, a nested def is one bound in the loop (made per trip) or above it (no
    site), a local lambda or partial is one configuration per trip. optax's tests jit
    `_schedule.polynomial_schedule(...)` per configuration and a `train_step` defined above the
    loop, admitted to the libcst check for test code that reports nothing (issue #33 item 7)."""
    if not call.args or type(call.args[0]) is ast.Starred:
        return True  # no site there: any answer is sound
    if type(call.args[0]) is ast.Name:
        return _rewraps(call.func, names)
    target: ast.AST = call.args[0]
    while type(target) is ast.Call and names.qualify_ast(target.func) in TRANSFORMS:
        if not target.args or type(target.args[0]) is ast.Starred:
            return True
        target = target.args[0]
    if type(target) is ast.Lambda:
        return False
    if type(target) is ast.Call:
        return type(target.func) is ast.Name and names.qualify_ast(target.func) not in PARTIALS
    return True


def _rewraps(expr: ast.AST, names: ImportMap) -> bool:
    """`expr` qualifies to a jit that is a new cache key even around a module function (`nnx.jit`)."""
    return names.qualify_ast(expr) in REWRAPPING_JITS


def _compiling(expr: ast.AST, names: ImportMap) -> bool:
    """`expr` qualifies to a compiling transform (checked on the last name first: it is cheap)."""
    kind = type(expr)
    if kind is ast.Attribute:
        return expr.attr in _SHORT and names.qualify_ast(expr) in COMPILING
    if kind is ast.Name:
        return names.bindings.get(expr.id, expr.id) in COMPILING
    return False


def _is_transform_site(node: ast.AST, names: ImportMap) -> bool:
    """`T(...)` with T a compiling transform, or a def whose first decorator is `@T` or
    `@functools.partial(T, ...)` (the planner reads the partial's first argument in source order;
    any argument over-approximates it)."""
    kind = type(node)
    if kind is ast.Call:
        return _compiling(node.func, names)
    if (kind is ast.FunctionDef or kind is ast.AsyncFunctionDef) and node.decorator_list:
        dec = node.decorator_list[0]
        if _compiling(dec, names):
            return True
        if type(dec) is ast.Call and names.qualify_ast(dec.func) in PARTIALS:
            given = [a.value if type(a) is ast.Starred else a for a in dec.args] + [k.value for k in dec.keywords]
            return any(_compiling(a, names) for a in given)
    return False


def _screen_walk(
    root: ast.AST, parent: ast.AST | None, where: Where, lines: list[int] | None = None
) -> Iterator[tuple[ast.AST, ast.AST | None, Where]]:
    """(node, parent, where) for every node under `root` outside lambdas, iteratively; given the
    sorted `lines` the wanted nodes start on, only for nodes whose lines span one of them (the
    others cannot hold a wanted node: `_may_hold`).

    `where` mirrors `ScopeIndex.enclosing_scope/enclosing_function/enclosing_loops`: a def's
    decorators, defaults and annotations and a class's bases run in the outer scope; a def or
    class body starts a new scope with no loop; a `for` loop's target and body and a `while`
    loop's test and body run per iteration, its iterable and `else` do not; in a comprehension
    everything but the first iterable runs per element (and belongs to the enclosing function).
    Lambdas are skipped: the planner never reports a site with a lambda among its ancestors
    (it runs under a trace, or as a key function), and no `def` or class can be inside one.
    """
    stack: list[tuple[ast.AST, ast.AST | None, Where]] = [(root, parent, where)]
    while stack:
        node, parent, where = stack.pop()
        if isinstance(node, ast.Lambda) or (lines is not None and not _may_hold(node, lines)):
            continue
        yield node, parent, where
        inner: dict[int, Where] = {}  # id(child) -> where, for children that run elsewhere than `node`
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = dict.fromkeys(map(id, node.body), Where(node.name, False))
        elif isinstance(node, ast.ClassDef):
            inner = dict.fromkeys(map(id, node.body), Where(CLASS, False))
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            head = node.test if isinstance(node, ast.While) else node.target
            inner = dict.fromkeys(map(id, [head, *node.body]), Where(where.function, True))
        elif isinstance(node, _AST_COMPREHENSIONS):
            looped = Where(where.function, True)
            first = node.generators[0]
            for child in astscan.children(node):
                if child is first:  # its iterable runs once; its target and conditions per element
                    stack.append((first.iter, first, where))
                    stack.extend((sub, first, looped) for sub in (first.target, *first.ifs))
                else:
                    stack.append((child, node, looped))
            continue
        stack.extend((child, node, inner.get(id(child), where)) for child in astscan.children(node))


def _may_hold(node: ast.AST, lines: list[int]) -> bool:
    """Whether `node` may be or hold a node starting on one of the sorted `lines`: its lines (from
    its first decorator, which comes before a def's `def`) span one. A node without a position
    (arguments, comprehension clauses, `with` items) may."""
    first = getattr(node, "lineno", None)
    last = getattr(node, "end_lineno", None)
    if first is None or last is None:
        return True
    decorators = getattr(node, "decorator_list", None)
    if decorators:
        first = min(first, *(d.lineno for d in decorators))
    i = bisect.bisect_left(lines, first)
    return i < len(lines) and lines[i] <= last


def _could_be_site(node: ast.AST, parent: ast.AST | None) -> bool:
    """Whether the planner may take `node`, a transform site (`_is_transform_site`) with this
    parent, for a site; where it runs is left to each rule's screen.

    Each condition below is one the planner requires, so rejecting on it is sound:
    - a call site is `T(F, ...)` with `T` a compiling transform and a positional, non-starred first
      argument, either called right away (`T(F)(x)`) or the whole value of a one-name assignment
      (`f = T(F)`) or of an attribute of a name (`self.f = T(F)`, `sites._stored_on_self`);
      anything else is "stored, returned or passed on";
    - a decorated site is a `def` whose first decorator is `@T` or `@functools.partial(T, ...)`
      (directly in a class body, or at module level outside loops, it is not a site: no rule's
      placement admits those).
    """
    if isinstance(node, ast.Call):
        if not node.args or isinstance(node.args[0], ast.Starred):
            return False
        called = isinstance(parent, ast.Call) and parent.func is node
        bound = (
            isinstance(parent, ast.Assign)
            and parent.value is node
            and len(parent.targets) == 1
            and (
                isinstance(parent.targets[0], ast.Name)
                or (isinstance(parent.targets[0], ast.Attribute) and isinstance(parent.targets[0].value, ast.Name))
            )
        )
        return called or bound
    return True


def _may_be_only_called(tree: ast.Module, top: ast.stmt, parent: ast.AST | None) -> bool:
    """For `f = T(F)` (`parent`, an assignment to one name, inside the top-level statement `top`):
    whether the planner's `_bound_calls` may accept it. It requires the assignment in a function
    or at module level (not in a class body), and every `Name` spelling `f` in that scope's body
    but the target to be the function of a call, and one at least (`scopes.name_uses` sees every
    stdlib `Name` there, and more, none of which can be a call's function). Anything else is
    True: the screen only answers no here."""
    if not (isinstance(parent, ast.Assign) and isinstance(parent.targets[0], ast.Name)):
        return True
    owner = _owner([top], parent, tree)
    if owner is None:
        return True  # not found: say yes
    if isinstance(owner, ast.ClassDef):
        return False
    names, calls = _name_counts(tree, owner)
    name = parent.targets[0].id
    called = calls[name]
    return called > 0 and names[name] - 1 == called  # every `Name` but the target's own is called


_COUNTS: list = [None, {}]  # [tree, {id(scope): (Name counts, call counts)}]: `_name_counts` of the last tree


@filememo.on_forget
def _forget_counts() -> None:
    _COUNTS[:] = [None, {}]


def _name_counts(tree: ast.Module, owner: ast.AST) -> tuple[Counter, Counter]:
    """(how often each name is spelled as a `Name`, how often it is the function of a call) in the
    scope `owner` (the module, or a def whose body it counts), counted once per scope: asked per
    site, walking the module for each made a file with thousands of module-level jits quadratic."""
    if _COUNTS[0] is not tree:
        _COUNTS[:] = [tree, {}]
    found = _COUNTS[1].get(id(owner))
    if found is None:
        names: Counter = Counter()
        calls: Counter = Counter()
        walked = astscan.nodes(tree) if owner is tree else (n for stmt in owner.body for n in astscan.nodes(stmt))
        for node in walked:
            kind = type(node)
            if kind is ast.Name:
                names[node.id] += 1
            elif kind is ast.Call and type(node.func) is ast.Name:
                calls[node.func.id] += 1
        found = _COUNTS[1][id(owner)] = (names, calls)
    return found


def _def_may_be_only_called(tree: ast.Module, top: ast.stmt, node: ast.AST, names: ImportMap) -> bool:
    """For a def decorated with a transform (`node`, inside the top-level statement `top`): whether
    the planner's `_site_for_decorated` may accept it. It requires the def in a function or at
    module level (not in a class body), and every use of its name in that scope's body but the def
    itself (`scopes.name_uses`: each stdlib `Name` spelling it is one) to be in the scope's own
    code, not in a nested function or lambda (nor, for a function's scope, a class body), and to
    call it, directly or as the first positional argument of a call of a wrapping transform
    called right there (`jax.grad(f)(x)`: `sites.WRAPPING`, as `_wrapped_call` asks; not
    `profiler.measure(f)(x)`); one such call at least. Anything else is True."""
    owner = _owner([top], node, tree)
    if owner is None:
        return True  # not found: say yes
    if isinstance(owner, ast.ClassDef):
        return False
    name, in_function = node.name, owner is not tree
    uses = called = 0
    stack: list[tuple[ast.AST, bool]] = [(stmt, False) for stmt in owner.body]  # (node, in a nested scope)
    while stack:
        n, away = stack.pop()
        if n is node:
            continue  # the def itself: its decorators, defaults and body are not uses
        kind = type(n)
        if kind is ast.Name:
            if n.id == name:
                if away:
                    return False
                uses += 1
            continue
        if kind is ast.Call and not away:
            func = n.func
            if type(func) is ast.Name and func.id == name:
                called += 1
            elif (
                type(func) is ast.Call
                and func.args
                and type(func.args[0]) is ast.Name
                and func.args[0].id == name
                and names.qualify_ast(func.func) in WRAPPING
            ):
                called += 1
        if kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.Lambda:
            inner = {id(n.body)} if kind is ast.Lambda else set(map(id, n.body))
            stack.extend((child, away or id(child) in inner) for child in astscan.children(n))
        elif kind is ast.ClassDef:
            inner = set(map(id, n.body)) if in_function else set()
            stack.extend((child, away or id(child) in inner) for child in astscan.children(n))
        else:
            stack.extend((child, away) for child in astscan.children(n))
    return called > 0 and uses == called


def _owner(stmts: list, target: ast.stmt, owner: ast.AST) -> ast.AST | None:
    """The innermost def or class whose body holds the statement `target` (else `owner`), found
    among `stmts` and the statements nested in them; None when it is not there."""
    for stmt in stmts:
        if stmt is target:
            return owner
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            inner = getattr(stmt, field, None)
            if type(inner) is list and inner:
                scope = stmt if field == "body" and isinstance(stmt, _SCOPES) else owner
                found = _owner(inner, target, scope)
                if found is not None:
                    return found
    return None


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
