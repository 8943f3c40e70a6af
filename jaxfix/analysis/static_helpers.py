"""Which calls of a module return static values: its own shape/dtype helpers, and callees out of sight.

`ModuleCallOracle` is the `static_values.CallOracle` of one module. It answers, for a call:

- `STATIC` when the callee is a plain module-level function whose every `return` is static
  even with all its parameters traced: `def is_floating(a): return jnp.issubdtype(a.dtype,
  jnp.floating)`, `def same_shapes(a, b): return tree_reduce(and_, tree_map(lambda x, y:
  jnp.shape(x) == jnp.shape(y), a, b))` (a fixpoint, so helpers may call helpers);
- `UNKNOWN` when the callee is a function (not a class: an instance holds the traced
  arguments it was built from) imported from a module outside the known array libraries and
  the standard library (the project's own modules, relative imports): its body is not in this
  file, so whether its result is traced is undecidable here, and an undecidable value is never
  a reason to report (precision first). `resolve`, when given, decides such a callee from
  elsewhere (a project-wide index of function bodies) before it is called unknown;
- None otherwise (the default rule of `traced.FunctionFacts`).
"""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from jaxfix.analysis.names import ImportMap, dotted_name
from jaxfix.analysis.scopes import FUNCTION_NODES, ScopeIndex
from jaxfix.analysis.static_values import STATIC, UNKNOWN
from jaxfix.analysis.static_values import is_known_library as _known
from jaxfix.analysis.traced import analyse_function, param_names
from jaxfix.analysis.walk import statements, walk

# qualified name of a function -> STATIC / TRACED / UNKNOWN, or None when not known there
Resolver = Callable[[str], "str | None"]


class ModuleCallOracle:
    """The call facts of one module (see the module docstring)."""

    def __init__(
        self,
        module: cst.Module,
        names: ImportMap,
        resolve: Resolver | None = None,
        own_packages: frozenset[str] = frozenset(),
        scopes: Callable[[], ScopeIndex] | None = None,
    ) -> None:
        """`own_packages`: the top-level packages of the checked project, out of sight even when
        one is a known array library (checking diffrax itself, `from diffrax._misc import f`).
        `scopes`: the module's `ScopeIndex` (the rule context's, shared), built here when not given
        and a nested helper needs it."""
        self.names = names
        self.resolve = resolve
        self.out_of_sight = _imported_out_of_sight(module, own_packages)
        self.static_functions: frozenset[str] = frozenset()
        self.nested_functions: frozenset[str] = frozenset()
        self._scopes = scopes or (lambda: ScopeIndex(module))
        self.static_functions = frozenset(self._static_functions(module))

    # -- CallOracle ------------------------------------------------------------------------
    def call_result(self, call: cst.Call) -> str | None:
        func = call.func
        if isinstance(func, cst.Name) and func.value in self.static_functions:
            return STATIC
        return self._imported(func)

    def knows_local(self, name: str) -> bool:
        return name in self.nested_functions

    def returns_static(self, func: cst.BaseExpression) -> bool:
        if isinstance(func, cst.Name) and func.value in self.static_functions:
            return True
        return self._imported(func) == STATIC

    # -- helpers -----------------------------------------------------------------------------
    def _imported(self, func: cst.BaseExpression) -> str | None:
        """The verdict on a function imported from a module this file cannot see into."""
        text = dotted_name(func)
        if text is None or text.split(".", 1)[0] not in self.out_of_sight:
            return None
        if text.rsplit(".", 1)[-1][:1].isupper():
            return None  # a class: its instance holds the traced arguments it was built from
        if self.resolve is not None:
            qual = self.names.qualify(func)
            verdict = self.resolve(qual) if qual is not None else None
            if verdict is not None:
                return verdict
        return UNKNOWN

    def _static_functions(self, module: cst.Module) -> set[str]:
        """Module-level plain functions that return static values whatever their arguments."""
        defs = _plain_functions(module, self._scopes)
        self.nested_functions = frozenset(name for name, node in defs.items() if id(node) not in {id(s) for s in module.body})
        static: set[str] = set()
        for _ in range(len(defs) + 1):  # grows monotonically: at most one pass per function
            self.static_functions = frozenset(static)
            found = {name for name, node in defs.items() if _returns_static(node, self.names, self)}
            if found == static:
                break
            static = found
        return static


def _plain_functions(module: cst.Module, scopes: Callable[[], ScopeIndex]) -> dict[str, cst.FunctionDef]:
    """Undecorated functions bound once (a decorator, e.g. `jit`, may change what is returned):
    module-level ones, and nested ones whose name nothing else in the module binds as a def or a
    parameter (haiku's `def is_new_rng(a, b): ... return a[0] is not b[0]` inside a function),
    so that a call of the name means that def wherever it is written."""
    out: dict[str, cst.FunctionDef] = {}
    seen: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            name = stmt.name.value
            if name in seen:
                out.pop(name, None)
                continue
            seen.add(name)
            if not stmt.decorators and not stmt.asynchronous:
                out[name] = stmt
    nested: dict[str, list[cst.FunctionDef]] = {}
    rebound: set[str] = set()  # parameters and assignment targets anywhere
    top = {id(stmt) for stmt in module.body}
    for stmt in statements(module):
        if isinstance(stmt, cst.FunctionDef):
            rebound.update(param_names(stmt.params))
            if id(stmt) not in top:
                nested.setdefault(stmt.name.value, []).append(stmt)
        elif isinstance(stmt, cst.Assign):
            rebound.update(t.target.value for t in stmt.targets if isinstance(t.target, cst.Name))
        elif isinstance(stmt, (cst.AnnAssign, cst.AugAssign)) and isinstance(stmt.target, cst.Name):
            rebound.add(stmt.target.value)
    for name, defs in nested.items():
        if name in seen or name in rebound or len(defs) != 1 or defs[0].decorators or defs[0].asynchronous:
            continue
        if _reads_enclosing_function(defs[0], scopes()):
            continue  # a variable of an enclosing function may be traced there
        out[name] = defs[0]
    return out


def _reads_enclosing_function(node: cst.FunctionDef, scopes: ScopeIndex) -> bool:
    """`node` reads a name an enclosing function binds (not one of the module or a builtin)."""
    return any(
        isinstance(scopes.resolve(name, node.body), FUNCTION_NODES) for name in scopes.free_names(node)
    )


def _returns_static(node: cst.FunctionDef, names: ImportMap, oracle: ModuleCallOracle) -> bool:
    """Every `return` of `node` gives a static value with all parameters traced, and it yields nothing."""
    returns: list[cst.Return] = []
    yields: list[cst.CSTNode] = []

    class Returns(cst.CSTVisitor):
        def visit_FunctionDef(self, n: cst.FunctionDef) -> bool:
            return n is node

        def visit_Lambda(self, n: cst.Lambda) -> bool:
            return False

        def visit_ClassDef(self, n: cst.ClassDef) -> bool:
            return False

        def visit_Return(self, n: cst.Return) -> None:
            returns.append(n)

        def visit_Yield(self, n: cst.Yield) -> None:
            yields.append(n)

    walk(node, Returns())
    values = [r.value for r in returns if r.value is not None]
    if not values or yields:
        return False
    facts = analyse_function(node, names, param_names(node.params), calls=oracle)
    return not any(facts.traced(v, r) for r, v in zip(returns, values))


def _imported_out_of_sight(module: cst.Module, own_packages: frozenset[str] = frozenset()) -> frozenset[str]:
    """Local names bound at module level by imports from modules outside the known libraries:
    relative imports (`from .shapes import f`, `from . import shapes`) and absolute imports of
    other packages (`from mypkg.ops import f`, `import mypkg.ops as ops`) or of the project's
    own packages (`own_packages`)."""

    def is_known_library(name: str) -> bool:
        return _known(name) and name.split(".", 1)[0] not in own_packages

    out: set[str] = set()
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.ImportFrom) and not isinstance(small.names, cst.ImportStar):
                source = dotted_name(small.module) if small.module is not None else ""
                if not small.relative and (source is None or is_known_library(source)):
                    continue
                for alias in small.names:
                    local = alias.asname.name if alias.asname is not None else alias.name
                    if isinstance(local, cst.Name):
                        out.add(local.value)
            elif isinstance(small, cst.Import):
                for alias in small.names:
                    full = dotted_name(alias.name)
                    if full is None or is_known_library(full):
                        continue
                    local = alias.asname.name if alias.asname is not None else None
                    if isinstance(local, cst.Name):
                        out.add(local.value)
                    elif local is None:
                        out.add(full.split(".", 1)[0])
    return frozenset(out)
