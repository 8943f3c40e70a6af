"""Positions: jaxfix's code-point offsets and columns <-> LSP positions.

Findings carry 1-based lines and 1-based *code-point* columns; `Edit`s carry
code-point offsets into the text. The editor counts `character` in the units
the client negotiated: UTF-16 code units unless the client and server agreed on
UTF-8 (bytes) or UTF-32 (code points). A character outside the Basic
Multilingual Plane (an emoji, say) is one code point, two UTF-16 units and four
UTF-8 bytes, so converting by hand is the only way the columns come out right.

Lines are split the way LSP and libcst split them: at "\\r\\n", "\\r" or "\\n"
only (never at the form feeds, vertical tabs or U+2028 that `str.splitlines`
also breaks on).
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from lsprotocol import types

UTF8 = types.PositionEncodingKind.Utf8
UTF16 = types.PositionEncodingKind.Utf16
UTF32 = types.PositionEncodingKind.Utf32

_NEWLINE = re.compile(r"\r\n|\r|\n")


def units(text: str, encoding: str) -> int:
    """How many units of `encoding` the string `text` takes."""
    if encoding == UTF32:
        return len(text)
    if encoding == UTF8:
        return len(text.encode("utf-8", "surrogatepass"))
    # UTF-16: one unit per code point, plus one for each astral code point.
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)


def _code_points(line: str, count: int, encoding: str) -> int:
    """The number of code points of `line` that make up its first `count` units.

    A position inside a character (half a surrogate pair, or the middle of a UTF-8
    sequence) is rounded up to the end of that character, as the spec asks; a
    position past the end of the line means the end of the line.
    """
    if encoding == UTF32:
        return min(count, len(line))
    used = 0
    for index, ch in enumerate(line):
        if used >= count:
            return index
        used += units(ch, encoding)
    return len(line)


@dataclass
class LineIndex:
    """Offsets of the line starts of one text, for fast offset <-> position conversion."""

    text: str
    encoding: str = UTF16

    def __post_init__(self) -> None:
        breaks = [m.span() for m in _NEWLINE.finditer(self.text)]  # one pass of the text for both
        self.starts = [0, *(end for _, end in breaks)]
        self.ends = [*(start for start, _ in breaks), len(self.text)]

    def line_text(self, line: int) -> str:
        """Line `line` (0-based) without its line break."""
        return self.text[self.starts[line] : self.ends[line]]

    @property
    def line_count(self) -> int:
        return len(self.starts)

    # -- code-point offsets -------------------------------------------------
    def position_of_offset(self, offset: int) -> types.Position:
        offset = max(0, min(offset, len(self.text)))
        line = bisect.bisect_right(self.starts, offset) - 1
        # An offset between "\r" and "\n" belongs to the end of the line.
        column = min(offset, self.ends[line]) - self.starts[line]
        return types.Position(line=line, character=units(self.line_text(line)[:column], self.encoding))

    def offset_of_position(self, position: types.Position) -> int:
        if position.line >= self.line_count:
            return len(self.text)
        line = self.line_text(position.line)
        return self.starts[position.line] + _code_points(line, position.character, self.encoding)

    # -- jaxfix's 1-based line and code-point column -------------------------
    def position_of(self, line: int, column: int) -> types.Position:
        """LSP position of 1-based `line` and 1-based code-point `column`."""
        if line < 1:
            return types.Position(line=0, character=0)
        if line > self.line_count:
            last = self.line_count - 1
            return types.Position(line=last, character=units(self.line_text(last), self.encoding))
        text = self.line_text(line - 1)
        return types.Position(line=line - 1, character=units(text[: max(column - 1, 0)], self.encoding))

    def range_of(self, line: int, column: int, end_line: int, end_column: int) -> types.Range:
        return types.Range(start=self.position_of(line, column), end=self.position_of(end_line, end_column))

    def range_of_offsets(self, start: int, end: int) -> types.Range:
        return types.Range(start=self.position_of_offset(start), end=self.position_of_offset(end))
