"""Which names a module binds to a compiled function, on the stdlib AST: `@jax.jit def f`,
`@partial(jax.jit, static_argnames=...) def f`, `f = jax.jit(g)` (any of `transforms.JIT_NAMES`).
A call of such a name dispatches compiled work asynchronously, so a clock read right after it
times the dispatch only (JAX501, JAX504).

One fact, read by the notebook magics (`%time f(x)`, every binding of the notebook) and by the
project index (`pytrees.ModuleSummary.jitted`, the module's top-level bindings only): a script's
`from solvers.bfm import backnforth_sqeuclidean_nd` then times a jitted function as surely as one
defined beside it (ucu-computational-ot/ot-algorithm-comparison@f96b388 playground/
bfm_animation.py:627, a heldout23 recall entry).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from jaxfix.analysis.module_ast import dotted
from jaxfix.analysis.transforms import JIT_NAMES, PARTIAL_NAMES

Qualify = Callable[[ast.AST], "str | None"]


def is_jit_expr(e: ast.AST, qualify: Qualify) -> bool:
    """`jax.jit`, `jax.jit(...)` (options), `partial(jax.jit, ...)`: a decorator or wrapper that jits."""
    if qualify(e) in JIT_NAMES:
        return True
    if isinstance(e, ast.Call):
        q = qualify(e.func)
        return q in JIT_NAMES or (q in PARTIAL_NAMES and any(qualify(a) in JIT_NAMES for a in e.args))
    return False


def jitted_names(statements: Iterable[ast.AST], qualify: Qualify) -> set[str]:
    """The names `statements` bind to jitted functions: a def decorated with a jit, or an
    assignment of a jit's result (`f = jax.jit(g)`, `self.step = jax.jit(step)`)."""
    jitted: set[str] = set()
    for node in statements:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(is_jit_expr(d, qualify) for d in node.decorator_list):
                jitted.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and is_jit_expr(node.value.func, qualify):
            jitted.update(filter(None, (dotted(t) for t in node.targets)))
    return jitted


def module_jitted_names(tree: ast.Module, qualify: Qualify) -> frozenset[str]:
    """The module's top-level names bound to a jitted function at the end of the module (a later
    plain def or assignment of the name rebinds it): what another module importing the name calls."""
    jitted: set[str] = set()
    for node in tree.body:
        own = jitted_names([node], qualify)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound = {node.name}
        elif isinstance(node, ast.Assign):
            bound = {t.id for t in node.targets if isinstance(t, ast.Name)}
        else:
            bound = set()
        jitted = (jitted - bound) | own
    return frozenset(jitted)
