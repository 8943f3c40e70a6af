"""Lines of a text after some fix rounds, traced back to the original text.

Findings of round 2 and later are positioned in the text the earlier rounds produced in
memory; people read them against the file on disk. Each round records how its lines came from
the previous text: an unchanged line maps to its old line, a line inside a changed region to
the region's first old line. A round's fixes are known edits, so their map is read off the
edits in one pass (`record_edits`); only what came after them (the import block) is diffed, and
only between its first and last changed line (`record`): difflib on a whole generated file with
thousands of repeated lines is quadratic (issue #33).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import replace

from jaxfix.model import Edit, Finding

_NEWLINE = re.compile(r"\r\n?|\n")


class LineMap:
    def __init__(self) -> None:
        self._rounds: list[list[int]] = []  # per step: new line index -> old line index

    def record(self, old: str, new: str) -> None:
        """A step turned `old` into `new` (lines compared; the common head and tail skipped)."""
        if old == new:
            return
        old_lines, new_lines = old.splitlines(), new.splitlines()
        last = max(len(old_lines) - 1, 0)
        head = 0
        while head < min(len(old_lines), len(new_lines)) and old_lines[head] == new_lines[head]:
            head += 1
        tail = 0
        while (
            tail < min(len(old_lines), len(new_lines)) - head
            and old_lines[len(old_lines) - 1 - tail] == new_lines[len(new_lines) - 1 - tail]
        ):
            tail += 1
        mapping = list(range(head)) + [0] * (len(new_lines) - head - tail)
        matcher = difflib.SequenceMatcher(
            a=old_lines[head : len(old_lines) - tail], b=new_lines[head : len(new_lines) - tail], autojunk=False
        )
        for tag, i1, _i2, j1, j2 in matcher.get_opcodes():
            for k in range(j2 - j1):
                mapping[head + j1 + k] = head + i1 + k if tag == "equal" else min(head + i1, last)
        mapping += range(len(old_lines) - tail, len(old_lines))
        self._rounds.append(mapping)

    def record_edits(self, old: str, edits: Iterable[Edit]) -> None:
        """`apply_edits(old, edits)` made the next text: each of its lines maps to the old line its
        first character came from (an edit's new text: the old line where the edit starts)."""
        starts = [0] + [m.end() for m in _NEWLINE.finditer(old)]  # old line index -> its offset
        if len(starts) > 1 and starts[-1] == len(old):
            starts.pop()  # the text ends with a newline: no line after it
        last = len(starts) - 1
        mapping: list[int] = []
        line_start = True  # the next character written begins a line
        line = 0  # the old line holding the cursor

        def line_of(offset: int) -> int:
            nonlocal line
            while line < last and starts[line + 1] <= offset:
                line += 1
            return line

        def piece(text: str, origin: Callable[[int], int]) -> None:
            """Lines begun in `text`: its k-th line start comes from old line `origin(k)`."""
            nonlocal line_start
            offset, k = 0, 0
            while offset < len(text):
                if line_start:
                    mapping.append(min(origin(k), last))
                    line_start = False
                found = _NEWLINE.search(text, offset)
                if found is None:
                    return
                offset, k, line_start = found.end(), k + 1, True

        cursor = 0
        for edit in sorted(edits, key=lambda e: (e.start, e.end)):
            first = line_of(cursor)
            piece(old[cursor : edit.start], lambda k, f=first: f + k)
            at = line_of(edit.start)
            if line_start and starts[at] == edit.start:
                # a whole-line edit: its lines that the old lines also hold map to those (a
                # rewrite that moves a loop body keeps the body's lines), as a diff would say
                piece(edit.text, _region_origins(old[edit.start : edit.end], edit.text, at, last))
            else:
                piece(edit.text, lambda k, a=at: a)
            cursor = edit.end
        first = line_of(cursor)
        piece(old[cursor:], lambda k, f=first: f + k)
        self._rounds.append(mapping)

    def original_line(self, line: int) -> int:
        """The 1-based line of the original text that 1-based `line` of the latest text came from."""
        for mapping in reversed(self._rounds):
            if not mapping:
                return 1
            line = mapping[min(max(line, 1), len(mapping)) - 1] + 1
        return line

    def original(self, finding: Finding) -> Finding:
        """`finding` placed in the original text (columns kept)."""
        if not self._rounds:
            return finding
        line = self.original_line(finding.line)
        return replace(finding, line=line, end_line=max(line, self.original_line(finding.end_line)))


def _region_origins(old: str, new: str, first: int, last: int) -> Callable[[int], int]:
    """Old line of each line of `new`, which replaced the lines `old` starting at line `first`:
    a line difflib matches maps to its old line, any other to the changed block's first."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    mapping = [first] * len(new_lines)
    for tag, i1, _i2, j1, j2 in difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False).get_opcodes():
        for k in range(j2 - j1):
            mapping[j1 + k] = first + i1 + k if tag == "equal" else min(first + i1, last)
    return lambda k: mapping[k] if k < len(mapping) else first
