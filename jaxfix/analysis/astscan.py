"""A flat walk of a stdlib-AST tree for `could_match` screens, cheaper than `ast.walk`.

`ast.walk` yields every node, the `Load`/`Store` context objects and operator tokens
included, through a generator per node (`ast.iter_child_nodes`, which reads every field,
identifiers and line numbers' neighbours too). Screens look for calls, definitions and the
like, never for those leaves, so `nodes` neither yields them nor reads the fields that can
only hold them or plain values; on the jax/flax/optax corpus it takes about half the time.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Container, Iterable, Iterator

from jaxfix.analysis import filememo

# Leaves no screen asks about: never yielded.
_LEAVES = (ast.expr_context, ast.operator, ast.unaryop, ast.cmpop, ast.boolop)
# Fields that hold only leaves or plain values (identifiers, flags, constants), in every node type.
_PLAIN_FIELDS = frozenset(
    {"ctx", "op", "ops", "id", "attr", "name", "names", "arg", "asname", "module", "level", "value_kind",
     "kind", "type_comment", "conversion", "is_async", "simple", "tag", "kwd_attrs", "rest"}
)


class _Fields(dict):
    """node type -> the fields that may hold nodes worth visiting."""

    def __missing__(self, node_type: type) -> tuple[str, ...]:
        if node_type is ast.Constant or issubclass(node_type, _LEAVES):
            fields: tuple[str, ...] = ()
        else:
            fields = tuple(f for f in node_type._fields if f not in _PLAIN_FIELDS)
        self[node_type] = fields
        return fields


_FIELDS = _Fields()


_last_module: tuple[ast.AST | None, list[ast.AST]] = (None, [])


def nodes(root: ast.AST) -> Iterable[ast.AST]:
    """Every node under `root` (itself included) but the `_LEAVES` and the `alias` nodes of
    import statements, in no particular order.

    A module's nodes are listed once and kept until another module is asked about: the screens
    of several rules, the call graph's entries and the pytree screen all walk the file a check
    parsed, one after the other (the tree must not change in between; none changes it)."""
    global _last_module
    if type(root) is not ast.Module:
        return _walk(root)
    last = _last_module
    if last[0] is not root:
        if root.type_ignores or not _shares_statements(root, last[0]):
            found = _listed(root)
        else:
            # the walk's order, statement by statement: the last statement's nodes come first
            found = [root]
            for statement in reversed(root.body):
                found.append(statement)
                found += _below(statement)
        last = _last_module = (root, found)
    return last[1]


_last_calls: tuple[ast.AST | None, list[ast.Call]] = (None, [])


@filememo.on_forget
def _forget() -> None:
    global _last_module, _last_calls, _last_statements, _last_walked
    _last_module = _last_calls = (None, [])
    _last_statements = _last_walked = (None, None, [])


def calls(root: ast.Module) -> list[ast.Call]:
    """The `ast.Call` nodes of `nodes(root)`, in its order, listed once per module as it is: the
    call graph's entries, the pytree screens and the trace screen look only at calls, a sixth of
    the nodes."""
    global _last_calls
    last = _last_calls
    if last[0] is not root:
        last = _last_calls = (root, [n for n in nodes(root) if type(n) is ast.Call])
    return last[1]


def calls_named(root: ast.Module, attrs: Container[str], names: Container[str]) -> list[ast.Call]:
    """The calls of `calls(root)`, in its order, whose function is an attribute `x.A` with `A` in
    `attrs` or a bare name in `names`: where a screen looks for the calls that may qualify to a
    transform, whose qualified name ends as it is spelled (one comprehension, no call per call)."""
    Attribute, Name = ast.Attribute, ast.Name
    return [
        call
        for call in calls(root)
        if ((kind := type(func := call.func)) is Attribute and func.attr in attrs) or (kind is Name and func.id in names)
    ]


def _shares_statements(root: ast.Module, previous: ast.AST | None) -> bool:
    """Whether `root` holds a statement of the last module walked: a tree built of another's
    statements (the editor's, `engine.incremental`: a group alone, the groups halved, the
    document after an edit), whose nodes are then listed statement by statement and kept with
    the statements. A parsed file shares none with another, and is walked at once."""
    if type(previous) is not ast.Module:
        return False
    seen = {id(statement) for statement in previous.body}
    return any(id(statement) in seen for statement in root.body)


# statement -> the nodes `_walk` yields below it, kept while the statement lives
_BELOW: weakref.WeakKeyDictionary[ast.AST, list[ast.AST]] = weakref.WeakKeyDictionary()


def _below(statement: ast.AST) -> list[ast.AST]:
    found = _BELOW.get(statement)
    if found is None:
        walk = _walk(statement)
        next(walk)  # the statement itself (kept out: the entry must not hold its key)
        found = _BELOW[statement] = list(walk)
    return found


def _walk(root: ast.AST) -> Iterator[ast.AST]:
    stack = [root]
    pop, push, extend = stack.pop, stack.append, stack.extend
    fields_of, descends = _FIELDS, _DESCENDS
    while stack:
        node = pop()
        if node is None:  # a `**mapping` entry of a dict display has no key
            continue
        yield node
        for field in fields_of[type(node)]:
            value = getattr(node, field)
            if type(value) is list:
                extend(value)
            elif descends[type(value)]:
                push(value)


class _Descends(dict):
    """value type -> whether `_walk` goes into a value of it: a node but not a `_LEAVES` one."""

    def __missing__(self, value_type: type) -> bool:
        self[value_type] = found = issubclass(value_type, ast.AST) and not issubclass(value_type, _LEAVES)
        return found


_DESCENDS = _Descends()


def _listed(root: ast.AST) -> list[ast.AST]:
    """`list(_walk(root))`, in the same order, built without a generator and with the type tests
    cached per value type (a sixth less time on the corpus's modules)."""
    found: list[ast.AST] = []
    append = found.append
    stack = [root]
    pop, push, extend = stack.pop, stack.append, stack.extend
    fields_of, descends = _FIELDS, _DESCENDS
    while stack:
        node = pop()
        if node is None:  # a `**mapping` entry of a dict display has no key
            continue
        append(node)
        for field in fields_of[type(node)]:
            value = getattr(node, field)
            if type(value) is list:
                extend(value)
            elif descends[type(value)]:
                push(value)
    return found


def children(node: ast.AST) -> list[ast.AST]:
    """`node`'s direct children as `nodes` walks them (`ast.iter_child_nodes` without the leaves)."""
    found: list[ast.AST] = []
    for field in _FIELDS[type(node)]:
        value = getattr(node, field)
        if type(value) is list:
            found.extend(v for v in value if v is not None)
        elif isinstance(value, ast.AST) and not isinstance(value, _LEAVES):
            found.append(value)
    return found


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def own_nodes(func: ast.AST) -> list[ast.AST]:
    """The nodes of a function's own body (not nested defs, lambdas, classes; not the
    expression-context and operator leaves, which `nodes` skips)."""
    out: list[ast.AST] = []
    stack = list(func.body)
    while stack:
        n = stack.pop()
        if isinstance(n, _SCOPES):
            continue
        out.append(n)
        stack.extend(children(n))
    return out


_last_statements: tuple[ast.AST | None, list | None, list[ast.stmt]] = (None, None, [])


def statements(tree: ast.AST) -> Iterable[ast.stmt]:
    """Every statement of the module (or of a def's or class's body) at any depth, outer before
    inner (a fifth of the nodes `ast.walk` visits). A module's are listed once and kept until
    another module is asked about, as `nodes` keeps its nodes: several screens and the pytree
    facts walk them in turn (the tree must not change in between; none changes it)."""
    global _last_statements
    if type(tree) is not ast.Module:
        return _statements(tree)
    last = _last_statements
    if last[0] is not tree or last[1] is not tree.body:
        last = _last_statements = (tree, tree.body, list(_statements(tree)))
    return last[2]


# the fields of a statement that hold statements (a `try`'s handlers, a `match`'s cases: each holds a body)
STATEMENT_BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")
BLOCKS_LAST_FIRST = STATEMENT_BLOCKS[::-1]  # pushed on a stack: popped in order (no statement has both handlers and cases)


def _statements(tree: ast.AST) -> Iterator[ast.stmt]:
    stack: list = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        yield node
        for name in BLOCKS_LAST_FIRST:
            block = getattr(node, name, None)
            if isinstance(block, list):
                stack.extend(reversed(block))


_last_walked: tuple[ast.AST | None, list | None, list[ast.AST]] = (None, None, [])
# the fields of a statement, an `except` handler or a `match` case that hold statements, handlers or cases
_BLOCK_FIELDS = frozenset(STATEMENT_BLOCKS)


def walked_statements(tree: ast.AST) -> list[ast.AST]:
    """The statements under `tree` (itself included), with the `except` handlers and `match`
    cases that hold some, in the order `ast.walk(tree)` yields them (breadth first), without the
    expressions, four nodes in five: what a question about assignments or definitions that keeps
    `ast.walk`'s order needs (the last binding of a name wins). A module's are listed once and
    kept until another module is asked about, as `statements` keeps its statements."""
    global _last_walked
    if type(tree) is ast.Module:
        last = _last_walked
        if last[0] is not tree or last[1] is not tree.body:
            last = _last_walked = (tree, tree.body, _breadth_first(tree))
        return last[2]
    return _breadth_first(tree)


def _breadth_first(tree: ast.AST) -> list[ast.AST]:
    # A level-by-level walk over the nodes that hold statements visits them in `ast.walk`'s
    # order: no expression holds a statement, and each node's blocks are taken in its field order.
    found = [tree]
    for node in found:  # grows as it goes: a queue
        for name in node._fields:
            if name in _BLOCK_FIELDS:
                block = getattr(node, name)
                if type(block) is list:
                    found += block
    return found


def module_level(stmts: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements that run in the module's namespace: its body and the blocks of its `if`,
    `for`, `while`, `with` and `try` statements (a script's `if __name__ == "__main__":`), not
    the bodies of defs or classes."""
    for stmt in stmts:
        yield stmt
        if isinstance(
            stmt,
            (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, getattr(ast, "TryStar", ast.Try)),
        ):
            for block in ("body", "orelse", "finalbody"):
                yield from module_level(getattr(stmt, block, []))
            for handler in getattr(stmt, "handlers", []):
                yield from module_level(handler.body)


def imports_jax(node: ast.AST) -> bool:
    """`node` is an import of jax, equinox or flax (or of one of their submodules)."""
    if isinstance(node, ast.Import):
        return any(a.name.split(".")[0] in ("jax", "equinox", "flax") for a in node.names)
    if isinstance(node, ast.ImportFrom):
        return bool(node.module) and node.module.split(".")[0] in ("jax", "equinox", "flax")
    return False


def loaded_names(root: ast.AST) -> set[str]:
    """Every name some code under `root` reads, at any depth: a load, or the target of `x += ...`,
    which reads `x` (the other side of `bound_names`)."""
    found: set[str] = set()
    for node in nodes(root):
        kind = type(node)
        if kind is ast.Name and type(node.ctx) is ast.Load:
            found.add(node.id)
        elif kind is ast.AugAssign and type(node.target) is ast.Name:
            found.add(node.target.id)
    return found


def bound_names(root: ast.AST) -> set[str]:
    """Every name some code under `root` binds, at any depth: assigned or deleted, a parameter, a
    def or class, an import, an `except ... as`, a match capture, or declared global or nonlocal.
    (A name not in it is bound nowhere in `root`, in whichever scope.)"""
    found: set[str] = set()
    for node in nodes(root):
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is not ast.Load:
                found.add(node.id)
        elif kind is ast.arg:
            found.add(node.arg)
        elif kind is ast.FunctionDef or kind is ast.AsyncFunctionDef or kind is ast.ClassDef:
            found.add(node.name)
        elif kind is ast.Import or kind is ast.ImportFrom:
            found.update(alias.asname or alias.name.partition(".")[0] for alias in node.names)
        elif kind is ast.ExceptHandler or kind is ast.MatchAs or kind is ast.MatchStar:
            if node.name:
                found.add(node.name)
        elif kind is ast.MatchMapping:
            if node.rest:
                found.add(node.rest)
        elif kind is ast.Global or kind is ast.Nonlocal:
            found.update(node.names)
    return found
