"""A module as chunks (its top-level statements, line-granular) and which chunks can affect which.

Every rule reaches from one top-level statement to another only through names: a jitted
function calls a module function by name, `jax.jit(f)` names `f`, a method is found by its
attribute name, a pytree class is named by its registration. So two chunks that share no
name (one binding what the other spells) cannot change each other's findings, and an edit
inside one function needs only its connected chunks re-analysed (`jaxfix.engine.incremental`).
Import-only chunks take part in every analysis and link nothing: they bind what every
chunk reads, but their meaning never depends on another chunk.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Chunk:
    """One top-level statement (or several sharing a line) with the blank and comment lines
    before it, as libcst attaches them: `source[start:end]` = lines `line..last_line`, the
    statement itself from `code_start` (line `first_line`, decorators included)."""

    line: int
    first_line: int
    last_line: int
    start: int
    code_start: int
    end: int
    text: str
    statements: range  # indices of its statements in the module's body


@dataclass(frozen=True)
class ChunkNames:
    """The names one chunk shares with others: module names it binds and reads (a function's
    own locals are not reads), attribute names it defines (class bodies, `self.x = ...`) and
    reads."""

    binds: frozenset[str]
    reads: frozenset[str]
    attrs: frozenset[str]
    attr_reads: frozenset[str]
    imports_only: bool
    runs_calls: bool  # calls something at module level (outside function and class bodies)


def line_starts(source: str) -> list[int]:
    """Offsets where each line begins, as Python counts lines (`\\n`, `\\r\\n` or `\\r`)."""
    starts = [0]
    starts.extend(m.end() for m in re.finditer(r"\r\n|\r|\n", source))
    return starts


def first_newline(source: str) -> str:
    """The newline libcst takes for a module's default: its first line break's (`\\n` for none)."""
    match = re.search(r"\r\n|\r|\n", source)
    return match.group() if match else "\n"


def split_chunks(source: str, tree: ast.Module, starts: list[int] | None = None) -> list[Chunk]:
    """The top-level statements of `tree` as chunks that tile the text up to the last statement;
    statements sharing a line share a chunk."""
    starts = line_starts(source) if starts is None else starts
    spans: list[list[int]] = []  # [first line, last line, first statement, statement after]
    for index, node in enumerate(tree.body):
        first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", ()))])
        last = node.end_lineno or node.lineno
        if spans and first <= spans[-1][1]:
            spans[-1][1] = max(spans[-1][1], last)
            spans[-1][3] = index + 1
        else:
            spans.append([first, last, index, index + 1])
    chunks: list[Chunk] = []
    for first, last, begin, after in spans:
        line = chunks[-1].last_line + 1 if chunks else 1
        start, code_start = starts[line - 1], starts[first - 1]
        end = starts[last] if last < len(starts) else len(source)
        chunks.append(Chunk(line, first, last, start, code_start, end, source[start:end], range(begin, after)))
    return chunks


def _runs_calls(statements: list[ast.stmt]) -> bool:
    """Whether module-level code here calls anything when the module runs (decorators and
    default values of definitions aside)."""
    todo: list[ast.AST] = [s for s in statements if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Call):
            return True
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            todo.extend(ast.iter_child_nodes(node))
    return False


def _is_import_only(statements: list[ast.stmt]) -> bool:
    for node in statements:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Pass)):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue
        if isinstance(node, ast.If) and _is_import_only(node.body) and _is_import_only(node.orelse):
            continue
        if isinstance(node, ast.Try) and all(
            _is_import_only(part) for part in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers))
        ):
            continue
        return False
    return True


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef, *_COMPREHENSIONS)


def _arguments(args: ast.arguments) -> list[ast.arg]:
    return [*args.posonlyargs, *args.args, *args.kwonlyargs, *(a for a in (args.vararg, args.kwarg) if a)]


def _scope_parts(node: ast.AST) -> tuple[list[ast.AST], list[ast.AST]]:
    """(evaluated in the enclosing scope, evaluated in the node's own scope) for a nested scope."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = node.args
        outer = [*args.defaults, *(d for d in args.kw_defaults if d is not None)]
        if not isinstance(node, ast.Lambda):
            outer += [*node.decorator_list, *(a.annotation for a in _arguments(args) if a.annotation)]
            outer += [node.returns] if node.returns else []
            return outer, list(node.body)
        return outer, [node.body]
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *node.keywords], list(node.body)
    first, *rest = node.generators
    inner = [first.target, *first.ifs, *rest, *([node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt])]
    return [first.iter], inner


class _Scope:
    """A module, class or function scope being walked: what it binds, loads and calls."""

    __slots__ = ("kind", "parent", "bound", "loads", "call_roots", "declared")

    def __init__(self, kind: str, parent: "_Scope | None") -> None:
        self.kind = kind  # "module" | "class" | "function" (lambdas and comprehensions too)
        self.parent = parent
        self.bound: set[str] = set()
        self.loads: set[str] = set()
        self.call_roots: set[str] = set()  # names whose value (or attribute of it) is called
        self.declared: set[str] = set()  # `global` / `nonlocal`: not local here


class _Names:
    """One walk of a chunk; a scope's loads are resolved when it closes (Python's rule: a name
    bound anywhere in a function is local to all of it), what is not local goes outward."""

    def __init__(self) -> None:
        self.binds: set[str] = set()
        self.reads: set[str] = set()
        self.attrs: set[str] = set()
        self.attr_reads: set[str] = set()

    def walk(self, statements: list[ast.stmt]) -> None:
        module = _Scope("module", None)
        for statement in statements:
            self._visit(statement, module)
        self.reads |= module.loads

    def _bind(self, scope: _Scope, name: str) -> None:
        scope.bound.add(name)
        if scope.kind == "module":
            self.binds.add(name)
        elif scope.kind == "class":
            self.attrs.add(name)

    def _visit(self, node: ast.AST, scope: _Scope) -> None:  # noqa: C901 - one case per node kind
        kind = type(node)
        if kind is ast.Name:
            if type(node.ctx) is ast.Load:
                scope.loads.add(node.id)
            else:
                self._bind(scope, node.id)
            return
        if kind is ast.Attribute:
            (self.attr_reads if type(node.ctx) is ast.Load else self.attrs).add(node.attr)
        elif kind is ast.Call:
            root = node.func
            while type(root) is ast.Attribute:
                root = root.value
            if type(root) is ast.Name:
                scope.call_roots.add(root.id)
            else:
                # `f()(x)`, `layers[0](x)`: may run a class's `__call__`
                self.attr_reads.add("__call__")
        elif kind is ast.Global or kind is ast.Nonlocal:
            scope.declared.update(node.names)
            if kind is ast.Global:
                self.binds.update(node.names)
                self.reads.update(node.names)
        elif kind is ast.alias:
            if node.name != "*":
                local = node.asname or node.name.split(".")[0]
                # The rules read imports module-wide (`ImportMap` takes every import statement,
                # nested ones too), so an import anywhere binds its name for every chunk.
                self.binds.add(local)
                self._bind(scope, local)
        elif kind in (ast.ExceptHandler, ast.MatchAs, ast.MatchStar):
            if node.name:
                self._bind(scope, node.name)
        elif kind is ast.MatchMapping:
            if node.rest:
                self._bind(scope, node.rest)
        elif kind is ast.NamedExpr and type(node.target) is ast.Name:
            self.binds.add(node.target.id)  # may bind outside a comprehension: a link too many is harmless
        if kind in _NESTED:
            if kind is not ast.Lambda and kind not in _COMPREHENSIONS:
                self._bind(scope, node.name)
            outer, inner = _scope_parts(node)
            for child in outer:
                self._visit(child, scope)
            own = _Scope("class" if kind is ast.ClassDef else "function", scope)
            if kind is not ast.ClassDef and kind not in _COMPREHENSIONS:
                own.bound.update(a.arg for a in _arguments(node.args))
            for child in inner:
                self._visit(child, own)
            self._close(own)
            return
        for child in ast.iter_child_nodes(node):
            self._visit(child, scope)

    def _close(self, scope: _Scope) -> None:
        # A class body reads its names sequentially and falls back to the module's: all its
        # loads go outward. A function (or lambda, comprehension) keeps its own.
        local = set() if scope.kind == "class" else scope.bound - scope.declared
        if scope.call_roots & local:
            # `model(x)` on a parameter or local may run a class's `__call__` (the rules pick the
            # module's one pytree class defining it)
            self.attr_reads.add("__call__")
        up = scope.parent
        while scope.kind != "class" and up.kind == "class":
            up = up.parent  # functions do not see the names of the class they are defined in
        up.loads |= scope.loads - local
        up.call_roots |= scope.call_roots - local


def chunk_names(text: str, statements: list[ast.stmt] | None = None) -> ChunkNames | None:
    """The names of one chunk: of its `statements` when the caller has them (from the module's
    tree: positions do not matter here), else of its text parsed alone.

    None when the text does not parse alone, which cannot happen for a chunk cut from a
    module that parses, except for a chunk indented under a line continuation.
    """
    if statements is None:
        try:
            statements = ast.parse(text).body
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
    names = _Names()
    names.walk(statements)
    return ChunkNames(
        frozenset(names.binds),
        frozenset(names.reads),
        frozenset(names.attrs),
        frozenset(names.attr_reads),
        _is_import_only(statements),
        _runs_calls(statements),
    )


def components(names: list[ChunkNames]) -> list[list[int]]:
    """Groups of chunk indices linked by names (import-only chunks left out), in source order.

    Linked: a chunk reading or binding a module name another binds; a chunk reading an
    attribute name and every chunk defining it; every chunk calling something at module level.
    """
    parent = list(range(len(names)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def link(i: int, j: int | None) -> None:
        if j is not None:
            parent[find(i)] = find(j)

    linked = [i for i, chunk in enumerate(names) if not chunk.imports_only]
    binders: dict[str, int] = {}
    definers: dict[str, list[int]] = {}
    for i in linked:
        for name in names[i].binds:
            link(i, binders.setdefault(name, i))
        for name in names[i].attrs:
            definers.setdefault(name, []).append(i)
    # Module-level code runs in sequence, and the timing checks (JAX5xx) read it as one timed
    # region: whatever calls something there is one group, names shared or not.
    scripts = [i for i in linked if names[i].runs_calls]
    for i in scripts[1:]:
        link(i, scripts[0])
    read: set[str] = set()
    for i in linked:
        for name in names[i].reads:
            link(i, binders.get(name))
        for name in names[i].attr_reads & definers.keys():
            link(i, definers[name][0])
            read.add(name)
    for name in read:
        # An attribute is resolved to a method only when one class defines it: the definers
        # of a name someone reads decide together.
        for i in definers[name][1:]:
            link(i, definers[name][0])
    groups: dict[int, list[int]] = {}
    for i in linked:
        groups.setdefault(find(i), []).append(i)
    return sorted(groups.values())


def default_indent(source: str, tree: ast.Module, starts: list[int] | None = None) -> str:
    """The indentation libcst detects for a module (its first indented block's), without tokenizing.

    A reduced text (`jaxfix.engine.incremental`) may have blanked that block, and libcst's native parser
    detects the indent from the text whatever its config says, so the reduced parse is checked
    against this.
    """
    starts = line_starts(source) if starts is None else starts
    for node in tree.body:
        indent = _first_block_indent(node, source, starts)
        if indent is not None:
            return indent
    return "    "


def _line(source: str, starts: list[int], number: int) -> str:
    end = starts[number] if number < len(starts) else len(source)
    return source[starts[number - 1] : end].rstrip("\r\n")


def _first_block_indent(node: ast.AST, source: str, starts: list[int]) -> str | None:
    """The indentation of the first block of `node` that starts on a line of its own, if any."""
    if isinstance(node, ast.Match):
        line = _line(source, starts, node.cases[0].pattern.lineno)
        return line[: len(line) - len(line.lstrip())]
    blocks = [getattr(node, "body", None), *(h.body for h in getattr(node, "handlers", ())), getattr(node, "orelse", None)]
    blocks.append(getattr(node, "finalbody", None))
    for block in blocks:
        if not isinstance(block, list) or not block:
            continue
        first = block[0]
        decorators = getattr(first, "decorator_list", ())
        line_number = min([first.lineno, *(d.lineno for d in decorators)])
        column = decorators[0].col_offset - 1 if decorators and decorators[0].lineno == line_number else first.col_offset
        line = _line(source, starts, line_number)
        prefix = line[: len(line) - len(line.lstrip())]
        if prefix and len(prefix) == column:
            return prefix
        if block is getattr(node, "orelse", None) and isinstance(first, ast.If) and not prefix:
            found = _first_block_indent(first, source, starts)  # `elif`: its blocks follow
            if found is not None:
                return found
    return None
