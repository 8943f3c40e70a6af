"""What JAX404 (`outer_state_mutation_in_traced_code`) knows of the state outside a traced
function, read from the stdlib AST for the rule and for its screen (`outer_state_screen`): the
container vocabulary (the mutators, which of them answer None or take contents out, the container
constructors, the methods that build an object), and the module's own state (`ModuleState`):
which module-level names hold containers, which are rebound after a trace could read them, and
which containers ordinary code fills or empties at run time.
"""

from __future__ import annotations

import ast

from jaxfix.analysis import astscan
from jaxfix.analysis.names import ImportMap
from jaxfix.analysis.pytrees import ast_statements, module_statements
from jaxfix.analysis.rebinding_order import Late, late_rebound
from jaxfix.analysis.runs_once import is_notebook_text
from jaxfix.analysis.screen_function import function_locals, target_names
from jaxfix.rulebase import RuleContext

CONTAINER_MUTATORS = frozenset(
    {
        "append",
        "extend",
        "insert",
        "pop",
        "remove",
        "clear",
        "update",
        "setdefault",
        "popitem",
        "add",
        "discard",
        "appendleft",
        "extendleft",
        "sort",
        "reverse",
    }
)
CONTAINER_CALLS = frozenset(
    {
        "list",
        "dict",
        "set",
        "collections.defaultdict",
        "collections.OrderedDict",
        "collections.deque",
        "collections.Counter",
        "defaultdict",
        "OrderedDict",
        "deque",
    }
)

# Of those, the ones a list, dict, set or deque answers with None: a call of one whose result the
# code assigns or returns is a method of another kind of object (optax's `updates, state = opt.update(g, state)`).
RETURN_NONE = CONTAINER_MUTATORS - {"pop", "setdefault", "popitem"}

# what `_is_container_ast` accepts, read without the imports: the last part of each name
_CONTAINER_TYPE_NAMES = frozenset(call.rpartition(".")[2] for call in CONTAINER_CALLS)
# methods that build the object: what they store on `self` belongs to a new object
CONSTRUCTION = frozenset({"__init__", "__post_init__", "__check_init__", "__new__", "setup"})


class ModuleState:
    """Module-level names: which hold containers, which the module reassigns, and which
    containers ordinary code changes at run time (`changed_by`: container -> the function)."""

    def __init__(self, containers: set[str], reassigned: set[str], changed_by=None, late=None) -> None:
        """`changed_by`: the mapping, or a function that makes it when first asked (a walk of every
        function of the module, which the screen asks for only when traced code reads one of the
        module's containers). `late`: the reassigned names some rebinding of which can run after a
        trace (`rebinding_order.late_rebound`), or a function that makes them when first asked."""
        self.containers = containers
        self._changed_by = changed_by if changed_by is not None else {}
        self._late = late if late is not None else {name: Late(0, None) for name in reassigned}

    @property
    def late(self) -> dict[str, Late]:
        """Module names rebound after a trace could have read them, and where such rebindings run
        (`rebinding_order.Late`): a read of one in traced code can see a stale value. Names only
        set up at import, in whatever order, are not among them."""
        if callable(self._late):
            self._late = self._late()
        return self._late

    @property
    def reassigned(self) -> dict[str, int]:
        """`late`'s names -> the line of one such rebinding, or of the call that makes it."""
        return {name: late.line for name, late in self.late.items()}

    @property
    def changed_by(self) -> dict[str, str]:
        if callable(self._changed_by):
            self._changed_by = self._changed_by()
        return self._changed_by

    @classmethod
    def of(cls, ctx: RuleContext) -> ModuleState:
        notebook = str(ctx.path).endswith(".ipynb") or is_notebook_text(ctx.source)
        return cls.of_tree(ctx.tree, ctx.names, notebook=notebook)

    @classmethod
    def of_tree(cls, tree: ast.Module, names: ImportMap, notebook: bool = False) -> ModuleState:
        """From the stdlib AST (a libcst visit of a large module costs about half a second).
        `notebook`: nothing runs after the module's last statement (`late_rebound`); without it
        the screen asks with more rebindings late, never fewer."""
        values: dict[str, list[ast.AST | None]] = {}
        defined: set[str] = set()  # def, class, import: not data
        global_writes: set[str] = set()

        def top(stmts) -> None:
            for stmt in stmts:
                if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    defined.add(stmt.name)
                elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                    defined.update((a.asname or a.name).split(".")[0] for a in stmt.names)
                elif isinstance(stmt, ast.Assign):
                    for t in stmt.targets:
                        bind(t, stmt.value)
                elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
                    bind(stmt.target, stmt.value)
                elif isinstance(stmt, ast.AugAssign):
                    bind(stmt.target, None)
                elif isinstance(stmt, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
                    if isinstance(stmt, ast.For):
                        bind(stmt.target, None)
                        bind(stmt.target, None)  # bound again at every iteration
                    for block in ("body", "orelse", "finalbody"):
                        top(getattr(stmt, block, ()) or ())
                    for handler in getattr(stmt, "handlers", ()) or ():
                        top(handler.body)

        def bind(target: ast.AST, value) -> None:
            """`value` for a plain name; an unpacked name's value is unknown (None)."""
            if isinstance(target, ast.Name):
                values.setdefault(target.id, []).append(value)
            else:
                for name in target_names(target):
                    values.setdefault(name, []).append(None)

        top(tree.body)
        statements = module_statements(tree)  # defs are statements: no need to walk expressions
        has_global = any(type(stmt) is ast.Global for stmt in statements)  # most modules have none
        for node in statements if has_global else ():
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                stmts = list(ast_statements(node.body))  # `global` and assignments are statements
                declared = {n for stmt in stmts if isinstance(stmt, ast.Global) for n in stmt.names}
                if declared:
                    for stmt in stmts:
                        targets = (
                            stmt.targets
                            if isinstance(stmt, ast.Assign)
                            else [stmt.target]
                            if isinstance(stmt, (ast.AugAssign, ast.AnnAssign))
                            else []
                        )
                        for t in targets:
                            global_writes.update(
                                n.id for n in ast.walk(t) if isinstance(n, ast.Name) and n.id in declared
                            )
        containers = {
            name
            for name, vals in values.items()
            if name not in defined and all(v is not None and _is_container_ast(v) for v in vals)
        }
        reassigned = {name for name, vals in values.items() if len(vals) > 1 and name not in defined}
        reassigned |= global_writes
        reassigned -= set(names.bindings)
        return cls(
            containers,
            reassigned,
            lambda: _changed_at_run_time(tree, containers),
            lambda: late_rebound(tree, reassigned, names.qualify_ast, notebook=notebook),
        )


# Mutators that take contents out: a container they are called on is run-time state, not a
# registry filled once at import.
EMPTYING = frozenset({"clear", "pop", "popitem", "remove", "discard"})


def _changed_at_run_time(tree: ast.Module, containers: set[str]) -> dict[str, str]:
    """Module containers that ordinary code fills or empties after import: a module-level
    function (or a method of a module-level class) whose own body mutates the container
    (`C.clear()`, `C[k] = v`, `del C[k]`, `C.update(...)`) and that either empties it (`clear`,
    `pop`, `del`, ...) or is called in a loop of a function of the module (`for eps in steps:
    set_step_size(eps)`): not at module level, as a decorator or from one-off setup code, which
    fill a registry once. A generator that pushes onto the container and pops it again around its
    `yield` (a `@contextmanager` scope stack, learned_optimization's `summary_scope`) is no such
    function: code that reads the stack inside the scope, at trace time too, reads the scope it
    runs in, by design. Container -> that function's name."""
    if not containers:
        return {}
    functions: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.append(stmt)
        elif isinstance(stmt, ast.ClassDef):
            functions.extend(s for s in stmt.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))
    called_in_loops: set[str] = set()  # names called in a loop of some function body
    writes: dict[str, list[tuple[str, bool]]] = {}  # container -> (function, empties it)
    for fn in functions:
        bound = function_locals(fn)
        for n in astscan.nodes(fn):
            kind = type(n)
            if kind is ast.For or kind is ast.While or kind is ast.AsyncFor:
                for inner in n.body:
                    for m in astscan.nodes(inner):
                        if type(m) is ast.Call:
                            f = m.func
                            called_in_loops.add(f.id if type(f) is ast.Name else getattr(f, "attr", ""))
            elif kind is ast.Call:
                func = n.func
                if type(func) is ast.Attribute:
                    head = func.value
                    if (
                        type(head) is ast.Name
                        and head.id in containers
                        and head.id not in bound
                        and func.attr in CONTAINER_MUTATORS
                        and _own_statement(fn, n)
                    ):
                        writes.setdefault(head.id, []).append((fn.name, func.attr in EMPTYING))
            elif kind is ast.Assign or kind is ast.AugAssign or kind is ast.Delete:
                targets = n.targets if kind is not ast.AugAssign else [n.target]
                for t in targets:
                    if (
                        type(t) is ast.Subscript
                        and type(t.value) is ast.Name
                        and t.value.id in containers
                        and t.value.id not in bound
                        and _own_statement(fn, n)
                    ):
                        writes.setdefault(t.value.id, []).append((fn.name, kind is ast.Delete))
    scopes = {fn.name for fn in functions if any(type(n) in (ast.Yield, ast.YieldFrom) for n in astscan.nodes(fn))}
    out: dict[str, str] = {}
    for name, found in writes.items():
        pushed_and_popped = {f for f, empties in found if empties} & {f for f, empties in found if not empties}
        for function, empties in found:
            if function in pushed_and_popped and function in scopes:
                continue  # a scope stack: pushed around a `yield` and popped after it
            if empties or function in called_in_loops:
                out[name] = function
                break
    return out


def _own_statement(fn: ast.AST, node: ast.AST) -> bool:
    """`node` (a statement or call of `fn`'s body) is not inside a def nested in `fn`: a nested
    def is often a decorator's wrapper that runs at import (`register(name)` returning `wrap`)."""
    stack = list(fn.body)
    while stack:
        cur = stack.pop()
        if cur is node:
            return True
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(astscan.children(cur))
    return False


def _is_container_ast(value: ast.AST) -> bool:
    if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        return name in _CONTAINER_TYPE_NAMES
    return False
