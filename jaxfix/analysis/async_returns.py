"""Which top-level functions and methods of a module hand back compiled work still in flight, on
the stdlib AST: a return of a call of a jitted function (a top-level jitted name, a jitted method
of the class: `@jax.jit def ds2(self, ...)`, `self._fast = jax.jit(...)`), of a lax loop run
eagerly, or of another such function, or of a name the body binds to one, in a function that
does not wait for that work (no `block_until_ready`, host conversion or test of it) nor calls back
to the host.

A module that imports one and reads the clock right after calling it times the dispatch only
(JAX501): rikab/SPECTER@<heldout29> `Studies/timing_tests.py` times `specter.spectralEMD(...)`,
whose last step returns the jitted `self.ds2(s1, s2)` unwaited. Read by the project index
(`pytrees.ModuleSummary.async_returners`): function names, and methods as `Class.method`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from jaxfix.analysis import astscan
from jaxfix.analysis.bound_jits import _own_statements, jit_of, jitted_names, module_jitted_names
from jaxfix.analysis.host_callbacks import host_callers
from jaxfix.analysis.host_waits import BLOCKING_METHODS, waits_by_name
from jaxfix.analysis.module_ast import dotted
from jaxfix.analysis.transforms import BLOCKING_JITS, JIT_NAMES, PARTIAL_NAMES, SYNCHRONOUS_CALLBACKS

Qualify = Callable[[ast.AST], "str | None"]

# lax's loops called outside a trace compile their body and dispatch it like a jitted call
EAGER_LAX_LOOPS = frozenset({"jax.lax.scan", "jax.lax.fori_loop", "jax.lax.while_loop", "jax.lax.map"})
# the last names of the jits, `partial` and the loops: the calls worth qualifying
_LAST_NAMES = frozenset(name.rsplit(".", 1)[-1] for name in (*JIT_NAMES, *PARTIAL_NAMES, *EAGER_LAX_LOOPS))
# how many rounds a function returning another's result is followed within the module
_ROUNDS = 3


def async_returners(
    tree: ast.Module,
    qualify: Qualify,
    jitted: frozenset[str] | None = None,
    callers: frozenset[str] | None = None,
) -> frozenset[str]:
    """The module's top-level functions (`run`) and methods of its top-level classes
    (`Solver.solve`) whose call returns compiled work it does not wait for, and its classes' jitted
    methods (`Solver.direct`), by the definitions in effect at the end of the module. `jitted`
    and `callers`: the module's `module_jitted_names` and `host_callers`, when the caller has them."""
    jitted = module_jitted_names(tree, qualify) if jitted is None else jitted
    callers = host_callers(tree, qualify) if callers is None else callers
    functions: dict[str, ast.FunctionDef] = {}
    classes: dict[str, ast.ClassDef] = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            functions[node.name] = node
            classes.pop(node.name, None)
        elif isinstance(node, ast.ClassDef):
            classes[node.name] = node
            functions.pop(node.name, None)
    if not jitted and not _mentions_jit_or_loop(tree, classes.values(), qualify):
        return frozenset()
    found: set[str] = set()
    for name, cls in classes.items():
        methods = {s.name: s for s in cls.body if isinstance(s, ast.FunctionDef)}
        own_jitted = _jitted_methods(cls, qualify)
        found |= {f"{name}.{m}" for m in own_jitted if m in methods}
        for _ in range(_ROUNDS):
            async_here = own_jitted | {m for m in methods if f"{name}.{m}" in found}
            grew = {
                f"{name}.{m}"
                for m, fn in methods.items()
                if f"{name}.{m}" not in found
                and not fn.decorator_list
                and _returns_work(fn, qualify, jitted, lambda f: _self_method(f) in async_here, callers)
            }
            if not grew:
                break  # a round that finds nothing new: the next would ask the same again
            found |= grew
    for _ in range(_ROUNDS):
        before = len(found)
        for name, fn in functions.items():  # in order: a function found here counts for the next ones
            if name not in found and not fn.decorator_list:
                if _returns_work(fn, qualify, jitted | found, lambda f: False, callers):
                    found.add(name)
        if len(found) == before:
            break
    return frozenset(found)


def _mentions_jit_or_loop(tree: ast.Module, classes: Iterable[ast.ClassDef], qualify: Qualify) -> bool:
    """A jit or an eager lax loop is called somewhere in the module, or decorates a method of one
    of its `classes` (else nothing returns work): the module's calls are listed once per tree
    (`astscan.calls_named`), as every module of a project is summarised."""
    named = astscan.calls_named(tree, _LAST_NAMES, _LAST_NAMES)
    if any(jit_of(c.func, qualify) is not None or qualify(c.func) in EAGER_LAX_LOOPS for c in named):
        return True
    return any(
        jit_of(d, qualify) is not None
        for cls in classes
        for method in cls.body
        if isinstance(method, ast.FunctionDef)
        for d in method.decorator_list
    )


def _jitted_methods(cls: ast.ClassDef, qualify: Qualify) -> set[str]:
    """The class's methods decorated with a jit that does not wait (`@partial(jax.jit,
    static_argnums=0) def step(self, ...)`) and its attributes any method binds to one
    (`self._fast = jax.jit(self._impl)`), by their names."""
    out = {m for m in jitted_names(cls.body, qualify, waiting=False) if "." not in m}
    for method in cls.body:
        if isinstance(method, ast.FunctionDef):
            for name in jitted_names(_own_statements(method), qualify, waiting=False):
                head, _, attr = name.partition(".")
                if head == "self" and attr and "." not in attr:
                    out.add(attr)
    return out


def _self_method(func: ast.AST) -> str | None:
    """`m` for `self.m`."""
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
        return func.attr
    return None


def _returns_work(
    fn: ast.FunctionDef,
    qualify: Qualify,
    async_names: frozenset[str] | set[str],
    async_method: Callable[[ast.AST], bool],
    callers: frozenset[str],
) -> bool:
    """`fn` returns a call of compiled work (or a name bound to one) and waits for nothing."""
    own = _own_statements(fn)

    def work(call: ast.AST) -> bool:
        if not isinstance(call, ast.Call):
            return False
        if isinstance(call.func, ast.Call):  # `jax.jit(f)(x)`
            jit = jit_of(call.func.func, qualify)
            return jit is not None and jit not in BLOCKING_JITS
        name = dotted(call.func)
        if name is not None and name in async_names:
            return True
        return async_method(call.func) or qualify(call.func) in EAGER_LAX_LOOPS

    made: set[str] = set()
    for stmt in own:
        if isinstance(stmt, ast.Assign) and work(stmt.value):
            for target in stmt.targets:
                elts = target.elts if isinstance(target, ast.Tuple) else [target]
                made.update(e.id for e in elts if isinstance(e, ast.Name))
    returned = False
    for stmt in own:
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            value = stmt.value
            parts = value.elts if isinstance(value, ast.Tuple) else [value]
            if any(work(p) or (isinstance(p, ast.Name) and p.id in made) for p in parts):
                returned = True
    return returned and not _waits(fn, made, qualify, callers)


def _waits(fn: ast.FunctionDef, made: set[str], qualify: Qualify, callers: frozenset[str]) -> bool:
    """`fn` (nested defs included) calls back to the host, or waits for a name it bound to compiled
    work (`made`): a blocking call or method reading it (`print(out)`, `out.item()`), or a Python
    test of it (`if out > 0`). A wait on something else (an input check, `if jnp.any(...)`, before
    the work is dispatched: SPECTER's `spectralEMD`) leaves the returned work in flight."""

    def reads_made(node: ast.AST) -> bool:
        return any(isinstance(n, ast.Name) and n.id in made for n in ast.walk(node))

    for node in ast.walk(fn):
        if isinstance(node, (ast.If, ast.While, ast.Assert, ast.IfExp)) and made and reads_made(node.test):
            return True
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        q = qualify(func)
        if q in SYNCHRONOUS_CALLBACKS or (isinstance(func, ast.Name) and func.id in callers):
            return True
        blocking = (isinstance(func, ast.Attribute) and func.attr in BLOCKING_METHODS) or waits_by_name(q)
        if blocking and made and reads_made(node):
            return True
    return False
