"""libcst's renderings (`Module.code_for_node`, `PositionProvider`) at less cost per node.

libcst renders every node through `record_syntactic_position`, a generator-based context
manager even where nothing is recorded, and the position-tracking state splits every token
with a regex to count its newlines. On a file with thousands of findings the renderings of
the statements that hold them (their text, their positions) were a sixth of `check`
(issue #33 item 1). These states produce the same tokens and the same positions with a plain
object as the context manager, and the position state counts tokens, from which the lines and
columns of the nodes asked about are derived afterwards.

libcst's `_parenthesize` (a generator-based context manager per expression rendered) is left as
it is: swapping it for a plain object while rendering (as `cstparse` swaps `__post_init__` while
parsing) saved 0.3% of the instructions of a check of the 5k-line generated file, too little to
patch the library for.
"""

from __future__ import annotations

import inspect
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodePosition, CodeRange
from libcst.metadata.position_provider import NEWLINE_RE


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
    """What `PositionProvidingCodegenState.record_syntactic_position` records on leaving, as
    token counts (`_PositionState`). One object serves every record of a rendering: the node
    and where it started wait on its `pending` stack (an object per record cost a call more).
    It holds the state's lists and tables, not the state: a state that held it back would be a
    reference cycle, its tokens kept until the cyclic collector ran (+57 MB at the peak of a fix
    of the 20k-line generated file)."""

    __slots__ = ("tokens", "computed", "extents", "pending")

    def __init__(self, tokens: list[str], computed: dict, extents: dict) -> None:
        self.tokens, self.computed, self.extents = tokens, computed, extents
        self.pending: list[tuple] = []  # (node, start_node, end_node, tokens before the node)

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type, *exc) -> bool:
        node, start_node, end_node, start = self.pending.pop()
        if exc_type is not None:  # a rendering stopped part way (`_UpToState`): the node is not whole
            return False
        computed = self.computed
        if start_node is not None:
            start = (computed.get(id(start_node)) or self.extents[id(start_node)])[0]
        if end_node is None:
            end = len(self.tokens)
        else:
            end = (computed.get(id(end_node)) or self.extents[id(end_node)])[1]
        computed[id(node)] = (start, end)
        return False


class _PositionState(CodegenState):
    """`PositionProvider`'s state, recording where each node starts and ends as the number of
    tokens rendered by then, by the id of the node (a node's own `__hash__` is a Python call):
    libcst's state updates a line and a column with a regex split of every token, while the
    positions of the few nodes a rule asks about are derived from the tokens afterwards
    (`Positions`), the same positions. A node's position is its syntactic one where its type
    records one (`computed`), else all of its tokens (`extents`): the hooks run for every node,
    so each does as little as it can."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.computed: dict[int, tuple[int, int]] = {}  # id -> (start, end): a syntactic position
        self.extents: dict[int, tuple[int, int]] = {}  # id -> (start, end): all of the node's tokens
        self.starts: list[int] = []
        self._syntactic = _Syntactic(self.tokens, self.computed, self.extents)

    def before_codegen(self, node) -> None:
        self.starts.append(len(self.tokens))

    def after_codegen(self, node) -> None:
        self.extents[id(node)] = (self.starts.pop(), len(self.tokens))

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        syntactic = self._syntactic
        syntactic.pending.append((node, start_node, end_node, len(self.tokens)))
        return syntactic

    def pop_trailing_newline(self) -> None:
        """Kept: libcst's position state pops the module's last newline from its tokens but not
        from its line and column, so the module ends after it."""


class _Done(Exception):
    """Raised by `_UpToState` once its node is rendered: the rest of the module is not."""


class _UpToState(_PositionState):
    """`_PositionState` that stops the rendering once `target` is rendered (`_Done`): the nodes
    rendered whole by then (`target`, what it holds and everything before it) have the positions
    the whole rendering gives them, counted from the same tokens; the nodes still open around
    `target` and those after it have none. A text `check` asks a statement about one node per
    finding, in the order the rules run: a later finding before the first one asked (a `print`
    before a traced `if`) is then answered without rendering the statement again."""

    def __init__(self, module: cst.Module, target: cst.CSTNode) -> None:
        super().__init__(module)
        self.target = target

    def after_codegen(self, node) -> None:
        self.extents[id(node)] = (self.starts.pop(), len(self.tokens))
        if node is self.target:
            raise _Done


class Positions:
    """The positions of a module's nodes, as `PositionProvider` gives them (`positions[node]`).
    It holds the module, so the ids it is keyed by stay those of its nodes. `up_to` gives those
    of one node's subtree alone, rendering the module only as far as that node."""

    __slots__ = ("_module", "_computed", "_extents", "_offsets", "_newlines")

    def __init__(self, module: cst.Module, state: _PositionState | None = None) -> None:
        if state is None:
            state = _PositionState(module)
            module._codegen(state)  # noqa: SLF001 - what `PositionProvider._gen_impl` runs
        self._module = module
        self._computed = state.computed  # syntactic positions; the others are `_extents`
        self._extents = state.extents
        self._offsets = [0, *accumulate(map(len, state.tokens))]  # token count -> characters by then
        self._newlines = _newline_ends(state.tokens, self._offsets)  # the offsets just after each newline

    @classmethod
    def up_to(cls, module: cst.Module, node: cst.CSTNode) -> "Positions":
        """The positions of `node` and the nodes under it (the others are not in it), the module
        rendered up to the end of `node` only: the rendering after it, half of a statement's on
        average, is not done (a text `check` asks one node's position per statement)."""
        state = _UpToState(module, node)
        try:
            module._codegen(state)  # noqa: SLF001
        except _Done:
            pass
        return cls(module, state)

    def _point(self, count: int, shift: int) -> CodePosition:
        """Line (plus `shift`) and column after the first `count` tokens, as libcst's state counts them."""
        offset = self._offsets[count]
        before = bisect_right(self._newlines, offset)
        return CodePosition(before + 1 + shift, offset - self._newlines[before - 1] if before else offset)

    def extent(self, node: cst.CSTNode) -> tuple[int, int] | None:
        """Offsets of all of `node`'s text in the rendering (a statement's leading lines and
        indentation included, which its position leaves out); None for a node not rendered."""
        span = self._extents.get(id(node))
        return None if span is None else (self._offsets[span[0]], self._offsets[span[1]])

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        return self.shifted(node, 0)

    def shifted(self, node: cst.CSTNode, lines: int) -> CodeRange:
        """`self[node]` moved down `lines` lines (the rendering of a statement that starts there)."""
        key = id(node)
        start, end = self._computed.get(key) or self._extents[key]
        return CodeRange(self._point(start, lines), self._point(end, lines))

    def __contains__(self, node: cst.CSTNode) -> bool:
        return id(node) in self._extents

    def __len__(self) -> int:
        return len(self._extents)


def _newline_ends(tokens: list[str], offsets: list[int]) -> list[int]:
    """The offsets just after each newline of the rendering, counted per token as libcst's state
    counts them (`NEWLINE_RE` split of each token): a carriage return ending one token and a line
    feed starting the next are two newlines."""
    text = "".join(tokens)
    ends = []
    boundaries: set[int] | None = None
    for found in NEWLINE_RE.finditer(text):
        start, end = found.span()
        if end - start == 2:
            if boundaries is None:
                boundaries = set(offsets)
            if start + 1 in boundaries:
                ends.append(start + 1)
        ends.append(end)
    return ends


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
