"""Lines of a text after some fix rounds, traced back to the original text.

Findings of round 2 and later are positioned in the text the earlier rounds produced in
memory; people read them against the file on disk. Each round records a line diff (difflib):
an unchanged line maps to its old line, a line inside a changed region to the region's first
old line.
"""

from __future__ import annotations

import difflib
from dataclasses import replace

from jaxfix.model import Finding


class LineMap:
    def __init__(self) -> None:
        self._rounds: list[list[int]] = []  # per round: new line index -> old line index

    def record(self, old: str, new: str) -> None:
        """One round turned `old` into `new`."""
        old_lines, new_lines = old.splitlines(), new.splitlines()
        mapping = [0] * len(new_lines)
        last = max(len(old_lines) - 1, 0)
        matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
        for tag, i1, _i2, j1, j2 in matcher.get_opcodes():
            for k in range(j2 - j1):
                mapping[j1 + k] = i1 + k if tag == "equal" else min(i1, last)
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
