"""The text of a file's top-level statements, which fixes and positions are worked out from
one statement at a time: each statement's offsets, first line and index in the module, the
positions inside it rendered alone, and the transformer that applies a fix's replacements and
insertions (`Rewriter`), with the helpers `RuleContext.rewrite` turns its result into edits with.
Split from `rulebase`, which keeps what a rule is and the context's API: these are per-file facts
(`ctx.fact`) and text mechanics no rule calls directly.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol

import libcst as cst
from libcst.metadata import CodeRange

from jaxfix.analysis import render
from jaxfix.analysis.top_spans import spans_from_lines
from jaxfix.analysis.walk import names_under


class FileContext(Protocol):
    """What these facts read of a file's `rulebase.RuleContext` (which imports this module)."""

    module: cst.Module
    source: str
    tree: ast.Module
    _elsewhere: Callable[[str], bool] | None
    edits: bool

    def fact(self, key: Any, factory: Callable[[Any], Any]) -> Any: ...


LONE_LF = re.compile(r"(?<!\r)\n")


def path_to(targets: Iterable[cst.CSTNode], parents: Mapping[cst.CSTNode, cst.CSTNode]) -> set[int]:
    """The ids of `targets` and of the nodes above them."""
    path: set[int] = set()
    for node in targets:
        while node is not None and id(node) not in path:
            path.add(id(node))
            node = parents.get(node)
    return path


def flat(inserts: Mapping[cst.CSTNode, list[cst.BaseStatement]] | None) -> list[cst.CSTNode]:
    return [stmt for stmts in (inserts or {}).values() for stmt in stmts]


def dropped_names(old: Iterable, new: Iterable, wanted: Mapping[str, object]) -> set[str]:
    """Identifiers in `wanted` (the import-bound names) that the `old` nodes of a fix spell and
    its `new` ones do not: uses the fix removed, whose imports may now be unused. A subtree the
    new nodes share with the old (`with_changes` keeps the children it is not given) spells the
    same names in both, so it is walked once. Most fixes remove no import-bound name at all
    (a traced `if` spells its operands, a `print` a builtin): the old nodes are walked first
    alone, and the new ones, often larger, only when that finds one."""
    old = list(old)
    if not names_under(old, set()).intersection(wanted):
        return set()
    shared: set[int] = set()
    kept = names_under(new, shared)
    return {name for name in names_under(old, shared) - kept if name in wanted}


def top_level_spans(ctx: FileContext) -> dict[cst.CSTNode, tuple[int, int]] | None:
    """Offsets of each top-level statement's text, read from the lines where they can tell
    (`top_spans`), else measured by rendering; None when the renderings do not tile the source."""
    module = ctx.module
    found = None
    try:
        # A reduced text's tree is the whole text's statements (their lines the whole text's), not
        # its own parse: the lines are read against a parse of the reduced text itself, which costs
        # a tenth of rendering every statement (the fix loop's rescan of a file with thousands of
        # fixes renders none).
        tree = ctx.tree if ctx._elsewhere is None else ast.parse(ctx.source)
        found = spans_from_lines(module, ctx.source, tree)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # a text only libcst parses
        pass
    if found is not None:
        return found
    offset = sum(len(render.code_of(module, line)) for line in module.header)
    spans = {}
    for statement in module.body:
        text = render.code_of(module, statement)
        if ctx.source[offset : offset + len(text)] != text:
            return None
        spans[statement] = (offset, offset + len(text))
        offset += len(text)
    return spans


def body_index(ctx: FileContext) -> dict[int, int]:
    """id of each top-level statement -> its first index in `module.body` (nodes are equal only
    when identical; the module holds them, so the ids stay theirs)."""
    found: dict[int, int] = {}
    for index, statement in enumerate(ctx.module.body):
        found.setdefault(id(statement), index)
    return found


def top_level_lines(ctx: FileContext) -> dict[cst.CSTNode, int]:
    """The line each top-level statement's text (leading comments included) starts on."""
    spans = ctx.fact(top_level_spans, top_level_spans) or {}
    lines, line, offset = {}, 1, 0
    for top, (start, _) in spans.items():
        line += ctx.source.count("\n", offset, start)
        offset = start
        lines[top] = line
    return lines


class StatementPositions:
    """Positions inside one top-level statement, rendered alone, memoised per statement.

    `shifted` answers the first node asked about in a statement from a rendering that stops at
    the end of that node (`render.Positions.up_to`), which also answers the nodes before it, and
    renders the whole statement for a node it does not hold: a text `check` asks one position per
    finding, the rest of the statement was a tenth of that check on a file with thousands of
    findings (a function's second finding, before its first in the order the rules run, was
    another whole rendering: 18% of the nodes rendered in a check of the 5k-line generated file). Where fixes are built
    (`edits`), every statement with a fix is rendered whole for them anyway: it is from the first."""

    def __init__(self, ctx: FileContext) -> None:
        self._module = ctx.module
        self._done: dict[cst.CSTNode, render.Positions] = {}
        self._partial: dict[cst.CSTNode, render.Positions] | None = None if ctx.edits else {}

    def __call__(self, top: cst.CSTNode) -> render.Positions:
        if top not in self._done:
            self._done[top] = _positions(self._alone(top))
        return self._done[top]

    def shifted(self, top: cst.CSTNode, node: cst.CSTNode, lines: int) -> CodeRange:
        """`node`'s position in statement `top` rendered alone, moved down `lines` lines."""
        partial = self._partial
        if partial is None or top in self._done:
            return self(top).shifted(node, lines)
        rendered = partial.get(top)
        if rendered is None:
            rendered = partial[top] = render.Positions.up_to(self._alone(top), node)
        elif node not in rendered:
            return self(top).shifted(node, lines)
        return rendered.shifted(node, lines)

    def _alone(self, top: cst.CSTNode) -> cst.Module:
        return self._module.with_changes(header=(), body=(top,), footer=())


def module_positions(ctx: FileContext) -> render.Positions:
    """Positions of the whole module (`ctx.wrapper.resolve(PositionProvider)`: the same)."""
    return render.positions(ctx.module)


def _positions(module: cst.Module) -> render.Positions:
    """`MetadataWrapper(module).resolve(PositionProvider)`, without the wrapper's resolver: it
    also runs a batched visit of the whole module for the batchable providers asked for, of
    which there are none here (an empty visit, half the cost of positions: a tenth of `check`
    on a file with thousands of findings). The rendering is `render.positions`, the same
    positions at about half the provider's cost."""
    return render.positions(module)


class Rewriter(cst.CSTTransformer):
    def __init__(self, replace, insert_before, insert_after) -> None:
        super().__init__()
        self.replace = replace
        self.before = insert_before
        self.after = insert_after
        self.path: set[int] | None = None  # ids of the nodes whose children may change (None: all)

    def on_visit(self, node) -> bool:
        # a replaced node's children are not visited either: its replacement discards them
        return (self.path is None or id(node) in self.path) and node not in self.replace

    def whole(self, node: cst.CSTNode):
        """What visiting `node` gives when `node` itself is replaced: the replacement (with its
        insertions), whatever the visit would have rebuilt inside it, which the replacement
        discards; None when `node` is not replaced (visit it)."""
        if node not in self.replace:
            return None
        return self.on_leave(node, node)

    def on_leave(self, original_node, updated_node):
        result = self.replace.get(original_node, updated_node)
        before = self.before.get(original_node, ())
        after = self.after.get(original_node, ())
        if before or after:
            middle = [] if isinstance(result, cst.RemovalSentinel) else [result]
            return cst.FlattenSentinel([*before, *middle, *after])
        return result


def crlf_only(ctx: FileContext) -> bool:
    """Does every line of the file end in CRLF (asked per fix: searched once per file)."""
    return "\r\n" in ctx.source and "\n" not in ctx.source.replace("\r\n", "")
