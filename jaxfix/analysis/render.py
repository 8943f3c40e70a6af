"""libcst's renderings (`Module.code_for_node`, `PositionProvider`) at less cost per node.

libcst renders every node through `record_syntactic_position`, a generator-based context
manager even where nothing is recorded, and the position-tracking state splits every token
with a regex to count its newlines. On a file with thousands of findings the renderings of
the statements that hold them (their text, their positions) were a sixth of `check`
(issue #33 item 1). These states produce the same tokens and the same positions with a plain
object as the context manager and a newline test before the split.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping, Sequence

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange
from libcst.metadata.position_provider import NEWLINE_RE, PositionProvidingCodegenState


class _Nothing:
    """A reusable context manager that records nothing."""

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> bool:
        return False


_NOTHING = _Nothing()


class _PlainState(CodegenState):
    """`CodegenState` (what `code_for_node` renders with), without a generator per node."""

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):  # noqa: ARG002
        return _NOTHING


def code_of(module: cst.Module, node: cst.CSTNode) -> str:
    """`module.code_for_node(node)`: the same text."""
    state = _PlainState(default_indent=module.default_indent, default_newline=module.default_newline)
    node._codegen(state)  # noqa: SLF001 - what `code_for_node` runs
    return "".join(state.tokens)


class _Syntactic:
    """What `PositionProvidingCodegenState.record_syntactic_position` records on leaving."""

    __slots__ = ("state", "node", "start_node", "end_node", "line", "column")

    def __init__(self, state, node, start_node, end_node) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node
        self.line, self.column = state.line, state.column

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> bool:
        state = self.state
        computed = state.computed
        if self.start_node is not None:
            line, column = computed[id(self.start_node)][:2]
        else:
            line, column = self.line, self.column
        if self.end_node is not None:
            end = computed[id(self.end_node)][2:]
        else:
            end = (state.line, state.column)
        computed[id(self.node)] = (line, column, *end)
        return False


class _PositionState(PositionProvidingCodegenState):
    """`PositionProvider`'s state, recording (start line, start column, end line, end column) by
    the id of each node (a node's own `__hash__` is a Python call): the same positions."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline, provider=None)
        self.computed: dict[int, tuple[int, int, int, int]] = {}
        self.starts: list[tuple[int, int, int]] = []
        self.offset = 0  # characters rendered so far
        self.extents: dict[int, tuple[int, int]] = {}

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self.offset += len(value)
        if "\n" not in value and "\r" not in value:
            self.column += len(value)
            return
        segments = NEWLINE_RE.split(value)
        self.line += len(segments) - 1
        self.column = len(segments[-1])

    def before_codegen(self, node) -> None:
        self.starts.append((self.line, self.column, self.offset))

    def after_codegen(self, node) -> None:
        line, column, offset = self.starts.pop()
        key = id(node)
        self.extents[key] = (offset, self.offset)
        if key not in self.computed:  # a syntactic position recorded inside is kept
            self.computed[key] = (line, column, self.line, self.column)

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        return _Syntactic(self, node, start_node, end_node)


class Positions:
    """The positions of a module's nodes, as `PositionProvider` gives them (`positions[node]`).
    It holds the module, so the ids it is keyed by stay those of its nodes."""

    __slots__ = ("_module", "_computed", "_extents")

    def __init__(self, module: cst.Module) -> None:
        state = _PositionState(module)
        module._codegen(state)  # noqa: SLF001 - what `PositionProvider._gen_impl` runs
        self._module = module
        self._computed = state.computed
        self._extents = state.extents

    def extent(self, node: cst.CSTNode) -> tuple[int, int] | None:
        """Offsets of all of `node`'s text in the rendering (a statement's leading lines and
        indentation included, which its position leaves out); None for a node not rendered."""
        return self._extents.get(id(node))

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        line, column, end_line, end_column = self._computed[id(node)]
        return CodeRange(CodePosition(line, column), CodePosition(end_line, end_column))

    def __contains__(self, node: cst.CSTNode) -> bool:
        return id(node) in self._computed

    def __len__(self) -> int:
        return len(self._computed)


def positions(module: cst.Module) -> Positions:
    """`MetadataWrapper(module).resolve(PositionProvider)`: the same positions, also for the
    nodes of a module built around part of another (no copy of the tree is made)."""
    return Positions(module)


def spliced(
    module: cst.Module,
    top: cst.CSTNode,
    text: str,
    rendered: Positions,
    parents: Mapping[cst.CSTNode, cst.CSTNode],
    replace: Mapping[cst.CSTNode, object],
    before: Mapping[cst.CSTNode, Sequence[cst.CSTNode]],
    after: Mapping[cst.CSTNode, Sequence[cst.CSTNode]],
    targets: Iterable[cst.CSTNode],
) -> str | None:
    """The text of `top` (a statement of `module.body`, `text` its rendering, `rendered` its
    positions) once the `targets` in it are replaced (`replace`, a node, a removal or a flattened
    list) or have statements inserted `before`/`after` them, as `RuleContext.rewrite` transforms
    it; None unless every target is a statement of a block, `top` itself, or a replaced node that
    renders alone (`_renders_alone`).

    Such a node renders the same text wherever it stands but for the indentation of the blocks
    around it, so the new text is the old with only the new code rendered into it: the same text
    as rendering the transformed `top`, at the cost of the new code rather than of the whole
    function per fix (a third of `check` on a file with thousands of fixes, issue #33)."""
    pieces: list[tuple[tuple[int, int, int], int, int, str]] = []  # (order, start, end, text)
    emptied: dict[int, int] = {}
    for target in dict.fromkeys(targets):
        statement = isinstance(target, cst.BaseStatement)
        if not statement and (target in before or target in after or not _renders_alone(target)):
            return None
        indents: list[str] = []
        node, inside_replaced = target, False
        while node is not top:
            child, node = node, parents.get(node)
            if node is None or isinstance(node, cst.Module):
                return None
            # the blocks that indent what they hold (a `match` its cases), as they render it
            if isinstance(node, cst.IndentedBlock) or (
                isinstance(node, cst.Match) and isinstance(child, cst.MatchCase)
            ):
                indents.append(module.default_indent if node.indent is None else node.indent)
            if node in replace:
                inside_replaced = True  # the rewrite never visits inside a replaced node
        if inside_replaced:
            continue
        if statement and target is not top and not isinstance(parents.get(target), cst.IndentedBlock):
            return None
        extent = rendered.extent(target)
        if extent is None:
            return None
        start, end = extent
        indents.reverse()
        new_before, new_after = list(before.get(target, ())), list(after.get(target, ()))
        if not statement:
            result = replace[target]
            if not isinstance(result, cst.CSTNode) or not _renders_alone(result):
                return None
            state = _PlainState(default_indent=module.default_indent, default_newline=module.default_newline)
            state.indent_tokens = indents
            result._codegen(state)  # noqa: SLF001 - as its parent renders it
            pieces.append(((start, 1, -end), start, end, "".join(state.tokens)))
            continue
        if target in replace:
            result = replace[target]
            if isinstance(result, cst.FlattenSentinel):
                middle = list(result.nodes)
            elif isinstance(result, cst.RemovalSentinel):
                middle = []
            else:
                middle = [result]
            nodes = [*new_before, *middle, *new_after]
            if not nodes and target is not top:
                parent = parents[target]
                emptied[id(parent)] = emptied.get(id(parent), 0) + 1
                if emptied[id(parent)] == len(parent.body):
                    return None  # an emptied block renders `pass`
            rendered_text = _render_statements(module, nodes, indents)
            if rendered_text is None:
                return None
            pieces.append(((start, 1, -end), start, end, rendered_text))
            continue
        for inserted, order, at in ((new_before, (start, 1, -end), start), (new_after, (end, 0, -start), end)):
            if inserted:
                rendered_text = _render_statements(module, inserted, indents)
                if rendered_text is None:
                    return None
                pieces.append((order, at, at, rendered_text))
    pieces.sort(key=lambda piece: piece[0])
    out, cursor = [], 0
    for _, start, end, new in pieces:
        if start < cursor:
            return None
        out.append(text[cursor:start])
        out.append(new)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def _render_statements(module: cst.Module, nodes: Sequence[cst.CSTNode], indents: list[str]) -> str | None:
    """`nodes`, statements, rendered inside blocks indented by `indents` (None for a non-statement)."""
    state = _PlainState(default_indent=module.default_indent, default_newline=module.default_newline)
    state.indent_tokens = list(indents)
    for node in nodes:
        if not isinstance(node, cst.BaseStatement):
            return None
        node._codegen(state)  # noqa: SLF001 - as the block holding it renders it
    return "".join(state.tokens)


_ALONE: dict[type, bool] = {}


def _renders_alone(node: cst.CSTNode) -> bool:
    """`node` is not a statement and renders the same text whatever node holds it: its codegen
    takes nothing from its parent (a call argument's default comma, an `elif`, a small statement's
    semicolon), which libcst passes as arguments of `_codegen_impl`."""
    kind = type(node)
    alone = _ALONE.get(kind)
    if alone is None:
        parameters = inspect.signature(kind._codegen_impl).parameters  # noqa: SLF001
        alone = _ALONE[kind] = len(parameters) == 2 and not issubclass(kind, cst.BaseStatement)
    return alone
