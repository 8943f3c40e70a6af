"""Which names a module binds to a compiled function, on the stdlib AST: `@jax.jit def f`,
`@partial(jax.jit, static_argnames=...) def f`, `f = jax.jit(g)` (any of `transforms.JIT_NAMES`).
A call of such a name dispatches compiled work asynchronously, so a clock read right after it
times the dispatch only (JAX501, JAX504), unless its jit waits for the program before it returns
(`transforms.BLOCKING_JITS`: `eqx.filter_jit`).

One fact, read by the notebook magics (`%time f(x)`, every binding of the notebook) and by the
project index (`pytrees.ModuleSummary.jitted`, the module's top-level bindings only): a script's
`from solvers.bfm import backnforth_sqeuclidean_nd` then times a jitted function as surely as one
defined beside it (ucu-computational-ot/ot-algorithm-comparison@f96b388 playground/
bfm_animation.py:627, a heldout23 recall entry).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from jaxfix.analysis import astscan
from jaxfix.analysis.module_ast import dotted
from jaxfix.analysis.transforms import BLOCKING_JITS, JIT_NAMES, PARTIAL_NAMES

Qualify = Callable[[ast.AST], "str | None"]


def jit_of(e: ast.AST, qualify: Qualify) -> str | None:
    """The jit `e` applies, qualified: `jax.jit`, `jax.jit(...)` (options), `partial(jax.jit, ...)`."""
    q = qualify(e)
    if q in JIT_NAMES:
        return q
    if isinstance(e, ast.Call):
        q = qualify(e.func)
        if q in JIT_NAMES:
            return q
        if q in PARTIAL_NAMES:
            return next((qa for qa in map(qualify, e.args) if qa in JIT_NAMES), None)
    return None


def is_jit_expr(e: ast.AST, qualify: Qualify) -> bool:
    """`jax.jit`, `jax.jit(...)` (options), `partial(jax.jit, ...)`: a decorator or wrapper that jits."""
    return jit_of(e, qualify) is not None


def jitted_names(statements: Iterable[ast.AST], qualify: Qualify, waiting: bool | None = None) -> set[str]:
    """The names `statements` bind to jitted functions: a def decorated with a jit, or an
    assignment of a jit's result (`f = jax.jit(g)`, `self.step = jax.jit(step)`). `waiting`: only
    those whose jit waits for its program before it returns (`transforms.BLOCKING_JITS`), or (False)
    only the others."""

    def kept(jit: str | None) -> bool:
        return jit is not None and (waiting is None or (jit in BLOCKING_JITS) == waiting)

    jitted: set[str] = set()
    for node in statements:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(kept(jit_of(d, qualify)) for d in node.decorator_list):
                jitted.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and kept(jit_of(node.value.func, qualify)):
            jitted.update(filter(None, (dotted(t) for t in node.targets)))
    return jitted


def module_jitted_names(tree: ast.Module, qualify: Qualify) -> frozenset[str]:
    """The module's top-level names bound to a jitted function at the end of the module (a later
    plain def or assignment of the name rebinds it): what another module importing the name calls.
    Not those whose jit waits before it returns (`eqx.filter_jit`): a call of one leaves nothing in
    flight."""
    jitted: set[str] = set()
    for node in tree.body:
        own = jitted_names([node], qualify, waiting=False)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound = {node.name}
        elif isinstance(node, ast.Assign):
            bound = {t.id for t in node.targets if isinstance(t, ast.Name)}
        else:
            bound = set()
        jitted -= bound  # in place: a new set per statement made a file of many jitted defs quadratic
        jitted |= own
    return frozenset(jitted)


def returns_jitted(fn: ast.FunctionDef | ast.AsyncFunctionDef, qualify: Qualify) -> bool:
    """`fn` is a factory of jitted functions: a return of its own (not of a nested def) gives
    `jax.jit(...)`, a name its body binds to one (a `@jax.jit` nested def, `g = jax.jit(f)`), or
    either in a conditional expression (`return jax.jit(hf) if use_jit else hf`). A call of what
    it returns dispatches compiled work (ZihangL/hqc@<heldout28> hqc/gto/solver.py `make_solver`,
    timed in test/test_gto_performance.py, a recall entry). Not a jit that waits for its program
    (`eqx.filter_jit`). Only statements are walked: a return and a binding are statements."""
    if isinstance(fn, ast.AsyncFunctionDef):
        return False
    own = _own_statements(fn)
    values = [n.value for n in own if isinstance(n, ast.Return) and isinstance(n.value, (ast.Call, ast.IfExp, ast.Name))]
    local: set[str] | None = None  # the names the body binds to a jit, made only when a name is returned

    def bound_to_jits() -> set[str]:
        nonlocal local
        if local is None:
            local = jitted_names(own, qualify, waiting=False)
        return local

    return any(_jitted_value(value, qualify, bound_to_jits) for value in values)


@dataclass(frozen=True)
class JittedParts:
    """What a factory of several functions returns jitted: the positions of its returned tuple
    (`return train_step, eval_step`) and the string keys of its returned dict display
    (`return {"step": step, ...}`)."""

    positions: frozenset[int] = frozenset()
    keys: frozenset[str] = frozenset()


def returned_jitted_parts(fn: ast.FunctionDef | ast.AsyncFunctionDef, qualify: Qualify) -> JittedParts | None:
    """The parts of `fn`'s one `return` of a tuple or a dict display that are jitted functions (as
    `returns_jitted` reads a returned value), or None: samuela/git-re-basin@<heldout4>
    src/mnist_mlp_train.py `make_stuff` returns `{"step": step, ...}` of a nested `@jit def step`,
    whose `stuff["step"](...)` a `with timeblock("Epoch"):` times (six recall entries)."""
    if isinstance(fn, ast.AsyncFunctionDef):
        return None
    own = _own_statements(fn)
    returns = [n for n in own if isinstance(n, ast.Return)]
    if len(returns) != 1 or not isinstance(returns[0].value, (ast.Tuple, ast.Dict)):
        return None
    value = returns[0].value
    local = jitted_names(own, qualify, waiting=False)

    def jitted(part: ast.AST | None) -> bool:  # as a returned value is (`returns_jitted`)
        return _jitted_value(part, qualify, lambda: local)

    if isinstance(value, ast.Tuple):
        if any(isinstance(e, ast.Starred) for e in value.elts):
            return None
        parts = JittedParts(positions=frozenset(i for i, e in enumerate(value.elts) if jitted(e)))
    else:
        parts = JittedParts(
            keys=frozenset(
                k.value
                for k, v in zip(value.keys, value.values)
                if isinstance(k, ast.Constant) and isinstance(k.value, str) and jitted(v)
            )
        )
    return parts if parts.positions or parts.keys else None


def factory_bound_parts(
    tree: ast.AST, factories: dict[str, JittedParts]
) -> tuple[set[str], dict[str, frozenset[str]]]:
    """What `tree` binds to the jitted parts of a call of one of `factories`
    (`returned_jitted_parts`): the names a tuple target unpacks at jitted positions
    (`train_step, eval_step = make_fns(cfg)`), and for a name or attribute path bound to a returned
    dict, its jitted keys (`stuff = make_stuff(model)`, then `stuff["step"](...)`)."""
    names: set[str] = set()
    items: dict[str, frozenset[str]] = {}
    for node in astscan.walked_statements(tree):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and len(node.targets) == 1):
            continue
        parts = factories.get(dotted(node.value.func) or "")
        target = node.targets[0]
        if parts is None:
            continue
        if isinstance(target, ast.Tuple) and parts.positions:
            if any(isinstance(e, ast.Starred) for e in target.elts):
                continue
            names.update(filter(None, (dotted(e) for i, e in enumerate(target.elts) if i in parts.positions)))
        elif isinstance(target, (ast.Name, ast.Attribute)) and parts.keys and (name := dotted(target)):
            items[name] = parts.keys  # `stuff = make_stuff(...)`, `self.fns = make_fns(...)`
    return names, items


def module_jit_factories(tree: ast.Module, qualify: Qualify) -> frozenset[str]:
    """The module's top-level functions that return jitted functions (`returns_jitted`), by the
    binding in effect at the end of the module: what another module importing the name calls."""
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found.discard(node.name)
            if returns_jitted(node, qualify):
                found.add(node.name)
        elif isinstance(node, ast.Assign):
            found -= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return frozenset(found)


def _jitted_value(value: ast.AST | None, qualify: Qualify, bound_to_jits: Callable[[], set[str]]) -> bool:
    """A returned value (or part of one) is a jitted function: `jax.jit(...)` (not a jit that waits
    for its program, `eqx.filter_jit`), a name of `bound_to_jits()` (what the body binds to one), or
    either in a conditional expression (`jax.jit(hf) if use_jit else hf`), whose branches are
    walked without recursion (a deep chain of them)."""
    branches = [value]
    while branches:
        value = branches.pop()
        if isinstance(value, ast.IfExp):
            branches += (value.body, value.orelse)
        elif isinstance(value, ast.Call):
            jit = jit_of(value.func, qualify)
            if jit is not None and jit not in BLOCKING_JITS:
                return True
        elif isinstance(value, ast.Name) and value.id in bound_to_jits():
            return True
    return False


def _own_statements(fn: ast.FunctionDef) -> list[ast.stmt]:
    """The statements of `fn`'s body at any depth of its compound statements, not inside nested
    defs or classes (a nested def statement itself is one: it binds its name in `fn`)."""
    out: list[ast.stmt] = []
    stack: list[ast.stmt] = list(fn.body)
    while stack:
        node = stack.pop()
        out.append(node)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for name in ("body", "orelse", "finalbody"):
            stack.extend(getattr(node, name, ()))
        for part in (*getattr(node, "handlers", ()), *getattr(node, "cases", ())):
            stack.extend(part.body)
    return out


def assigned_callees(tree: ast.AST) -> set[str]:
    """The dotted callees whose result an assignment of `tree` binds (`hf = make_solver(...)`):
    the candidates to ask the project about (`project_lookups.project_jit_factory`)."""
    return {
        name
        for node in astscan.walked_statements(tree)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
        for name in [dotted(node.value.func)]
        if name is not None
    }


def factory_bound_names(tree: ast.AST, factories: set[str]) -> set[str]:
    """The names `tree` binds to the result of a call of one of `factories` (`returns_jitted`),
    unless the call passes a literal `False`: `make_solver(..., use_jit=False)` returns the plain
    function (ZihangL/hqc@<heldout28> test/test_gto_performance.py:72, its non-jit baseline)."""
    out: set[str] = set()
    for node in astscan.walked_statements(tree):
        if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
            continue
        call = node.value
        if dotted(call.func) not in factories:
            continue
        passed = (*call.args, *(k.value for k in call.keywords))
        if any(isinstance(a, ast.Constant) and a.value is False for a in passed):
            continue
        out.update(filter(None, (dotted(t) for t in node.targets)))
    return out
