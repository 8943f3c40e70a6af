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
from jaxfix.analysis.scopes import FUNCTION_NODES, ScopeIndex, param_names
from jaxfix.analysis.static_values import FUNCTION_CACHES, STATIC, UNKNOWN
from jaxfix.analysis.static_values import is_known_library as _known
from jaxfix.analysis.traced import analyse_function
from jaxfix.analysis.walk import children, statements, walk

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
        self.module = module
        self.out_of_sight = _imported_out_of_sight(module, own_packages)
        self._scopes = scopes or (lambda: ScopeIndex(module))
        # decided per function on first ask (most files ask about few of their functions or none)
        self._top: dict[str, cst.FunctionDef] | None = None
        self._seen: set[str] = set()  # every module-level def's name, with `_top`
        self._nested: dict[str, cst.FunctionDef] | None = None  # candidates; `_plain` checks the rest
        self._plain_memo: dict[str, cst.FunctionDef | None] = {}
        self._static: dict[str, bool] = {}  # final verdicts
        self._assumed: dict[str, bool] | None = None  # the current round of a fixpoint being run
        self._elements: dict[tuple[str, int, int], bool] = {}  # `element_static` verdicts

    # -- CallOracle ------------------------------------------------------------------------
    def call_result(self, call: cst.Call) -> str | None:
        func = call.func
        if isinstance(func, cst.Name) and self._is_static(func.value):
            return STATIC
        return self._imported(func)

    def element_static(self, call: cst.Call, index: int, count: int) -> bool:
        """Element `index` of the `count`-tuple `call` returns is static with every parameter
        traced: the callee is a plain function of the module whose every `return` is a tuple
        display of `count` elements, that element static in each (`return loss, x.shape[0]`)."""
        func = call.func
        if not isinstance(func, cst.Name):
            return False
        key = (func.value, index, count)
        if key not in self._elements:
            self._elements[key] = False  # while deciding (a recursive helper): not known
            node = self._plain(func.value)
            self._elements[key] = node is not None and _element_static(node, self.names, self, index, count)
        return self._elements[key]

    def knows_local(self, name: str) -> bool:
        return self._plain(name) is not None and name not in self._top_defs()

    def returns_static(self, func: cst.BaseExpression) -> bool:
        if isinstance(func, cst.Name) and self._is_static(func.value):
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

    def _top_defs(self) -> dict[str, cst.FunctionDef]:
        if self._top is None:
            self._top, self._seen = _top_functions(self.module, self.names)
        return self._top

    def _plain(self, name: str) -> cst.FunctionDef | None:
        """The plain function `name` means wherever it is called (undecorated, bound once), or None."""
        if name in self._plain_memo:
            return self._plain_memo[name]
        node = self._top_defs().get(name)
        if node is None and name not in self._seen:
            if self._nested is None:
                self._nested = _nested_candidates(self.module, self._seen)
            node = self._nested.get(name)
            if node is not None and _reads_enclosing_function(node, self._scopes()):
                node = None  # a variable of an enclosing function may be traced there
        self._plain_memo[name] = node
        return node

    def _is_static(self, name: str) -> bool:
        """Does the plain function `name` return a static value whatever its arguments? The least
        fixpoint over the functions it may call (helpers may call helpers), decided on first ask:
        the same verdicts as a fixpoint over every function of the module, since a function's
        verdict depends only on those of the functions its body names."""
        if self._assumed is not None and name in self._assumed:
            return self._assumed[name]
        verdict = self._static.get(name)
        if verdict is not None:
            return verdict
        if self._plain(name) is None:
            return False
        group: dict[str, cst.FunctionDef] = {}
        todo = [name]
        while todo:  # the undecided plain functions `name` may reach through the names it reads
            current = todo.pop()
            if current in group or current in self._static:
                continue
            node = self._plain(current)
            if node is None:
                continue
            group[current] = node
            todo.extend(_names_read(node))
        outer = self._assumed
        static: set[str] = set()
        for _ in range(len(group) + 1):  # grows monotonically: at most one pass per function
            self._assumed = {n: n in static for n in group}
            found = {n for n, node in group.items() if _returns_static(node, self.names, self)}
            if found == static:
                break
            static = found
        self._assumed = outer
        for n in group:
            self._static[n] = n in static
        return self._static[name]


def _top_functions(module: cst.Module, names: ImportMap) -> tuple[dict[str, cst.FunctionDef | cst.Lambda], set[str]]:
    """Module-level functions defined once, undecorated or only memoised (`@functools.cache`:
    the same result), or bound once to a lambda (`is_type = lambda x, cls: type(x).__name__ ==
    cls.__name__`, jax-ml/jax-llm-examples), and the names of every module-level def or binding."""
    out: dict[str, cst.FunctionDef | cst.Lambda] = {}
    seen: set[str] = set()
    for stmt in module.body:
        if isinstance(stmt, cst.FunctionDef):
            name = stmt.name.value
            if name in seen:
                out.pop(name, None)
                continue
            seen.add(name)
            if not stmt.asynchronous and all(is_memoised(d, names) for d in stmt.decorators):
                out[name] = stmt
        elif isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                targets = small.targets if isinstance(small, cst.Assign) else []
                for target in targets:
                    for name in _bound_names(target.target):
                        if name in seen:
                            out.pop(name, None)
                            continue
                        seen.add(name)
                        if (
                            len(targets) == 1
                            and isinstance(target.target, cst.Name)
                            and isinstance(small.value, cst.Lambda)
                        ):
                            out[name] = small.value
    return out, seen


def _bound_names(target: cst.BaseExpression) -> list[str]:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        return [n for el in target.elements for n in _bound_names(el.value)]
    return []


def is_memoised(decorator: cst.Decorator, names: ImportMap) -> bool:
    """`@functools.cache`, `@functools.lru_cache`, `@functools.lru_cache(maxsize=...)`."""
    d = decorator.decorator
    return names.qualify(d.func if isinstance(d, cst.Call) else d) in FUNCTION_CACHES


def _nested_candidates(module: cst.Module, seen: set[str]) -> dict[str, cst.FunctionDef]:
    """Nested undecorated functions whose name nothing else in the module binds as a def or a
    parameter (haiku's `def is_new_rng(a, b): ... return a[0] is not b[0]` inside a function),
    so that a call of the name means that def wherever it is written; whether one reads a
    variable of an enclosing function is left to `ModuleCallOracle._plain`."""
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
    return {
        name: defs[0]
        for name, defs in nested.items()
        if not (name in seen or name in rebound or len(defs) != 1 or defs[0].decorators or defs[0].asynchronous)
    }


def _names_read(node: cst.CSTNode) -> set[str]:
    """Every `Name` written anywhere under `node`: a superset of the functions it may call."""
    out: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Name:
            out.add(current.value)
        else:
            stack.extend(children(current))
    return out


def _reads_enclosing_function(node: cst.FunctionDef, scopes: ScopeIndex) -> bool:
    """`node` reads a name an enclosing function binds (not one of the module or a builtin)."""
    return any(
        isinstance(scopes.resolve(name, node.body), FUNCTION_NODES) for name in scopes.free_names(node)
    )


def _returns_static(node: cst.FunctionDef | cst.Lambda, names: ImportMap, oracle: ModuleCallOracle) -> bool:
    """Every `return` of `node` (a lambda's body) gives a static value with all parameters traced,
    and it yields nothing."""
    if isinstance(node, cst.Lambda):
        facts = analyse_function(node, names, param_names(node.params), calls=oracle)
        return not facts.traced(node.body)
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
    # a memoised function's arguments are hashed: a tracer (unhashable) never reaches its body
    # (google/tunix `rl/common.py:295`, `inspect.signature` of a model class, held-out2 labels)
    memoised = bool(node.decorators)  # `_plain` admits only memoising decorators
    traced_params = [] if memoised else param_names(node.params)
    facts = analyse_function(node, names, traced_params, calls=oracle)
    return not any(facts.traced(v, r) for r, v in zip(returns, values))


def _element_static(node: cst.FunctionDef, names: ImportMap, oracle: ModuleCallOracle, index: int, count: int) -> bool:
    if isinstance(node, cst.Lambda):  # a tuple display as its body, that element static
        body = node.body
        if not isinstance(body, cst.Tuple) or len(body.elements) != count:
            return False
        element = body.elements[index]
        if isinstance(element, cst.StarredElement):
            return False
        return not analyse_function(node, names, param_names(node.params), calls=oracle).traced(element.value)
    returns = [r for r in statements(node) if isinstance(r, cst.Return)]
    if not returns or any(
        not isinstance(r.value, cst.Tuple)
        or len(r.value.elements) != count
        or any(isinstance(el, cst.StarredElement) for el in r.value.elements)
        for r in returns
    ):
        return False
    if any(isinstance(n, (cst.Yield,)) for n in _yields(node)):
        return False
    facts = analyse_function(node, names, param_names(node.params), calls=oracle)
    return not any(facts.traced(r.value.elements[index].value, r) for r in returns)


def _yields(node: cst.FunctionDef) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []

    class V(cst.CSTVisitor):
        def visit_Yield(self, n: cst.Yield) -> None:
            found.append(n)

    walk(node, V())
    return found


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
