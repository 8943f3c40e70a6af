"""libcst's renderings (`Module.code_for_node`, `PositionProvider`) at less cost per node.

libcst renders every node through `record_syntactic_position`, a generator-based context
manager even where nothing is recorded, and the position-tracking state splits every token
with a regex to count its newlines. On a file with thousands of findings the renderings of
the statements that hold them (their text, their positions) were a sixth of `check`
(issue #33 item 1). These states produce the same tokens and the same positions with a plain
object as the context manager and a newline test before the split.
"""

from __future__ import annotations

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
        self.starts: list[tuple[int, int]] = []

    def add_indent_tokens(self) -> None:
        for token in self.indent_tokens:
            self.add_token(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        if "\n" not in value and "\r" not in value:
            self.column += len(value)
            return
        segments = NEWLINE_RE.split(value)
        self.line += len(segments) - 1
        self.column = len(segments[-1])

    def before_codegen(self, node) -> None:
        self.starts.append((self.line, self.column))

    def after_codegen(self, node) -> None:
        start = self.starts.pop()
        key = id(node)
        if key not in self.computed:  # a syntactic position recorded inside is kept
            self.computed[key] = (*start, self.line, self.column)

    def record_syntactic_position(self, node, *, start_node=None, end_node=None):
        return _Syntactic(self, node, start_node, end_node)


class Positions:
    """The positions of a module's nodes, as `PositionProvider` gives them (`positions[node]`).
    It holds the module, so the ids it is keyed by stay those of its nodes."""

    __slots__ = ("_module", "_computed")

    def __init__(self, module: cst.Module) -> None:
        state = _PositionState(module)
        module._codegen(state)  # noqa: SLF001 - what `PositionProvider._gen_impl` runs
        self._module = module
        self._computed = state.computed

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
