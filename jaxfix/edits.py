"""Text edits: derive the smallest edits between two versions, and apply them.

Rules build fixes by transforming the libcst tree; `edits_between` turns the
new text back into line-granular edits, so untouched bytes stay untouched and
editors receive minimal `TextEdit`s rather than whole-document replacements.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

from jaxfix.model import Edit


def _line_offsets(lines: Sequence[str]) -> list[int]:
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    return offsets


def edits_between(old: str, new: str) -> tuple[Edit, ...]:
    """Line-granular edits that turn `old` into `new` (offsets into `old`)."""
    if old == new:
        return ()
    old_lines = old.splitlines(keepends=True)
    new_lines = new.splitlines(keepends=True)
    old_offsets = _line_offsets(old_lines)
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    edits = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        edits.append(Edit(old_offsets[i1], old_offsets[i2], "".join(new_lines[j1:j2])))
    return tuple(edits)


def overlaps(a: Iterable[Edit], b: Iterable[Edit]) -> bool:
    """True when any edit of `a` touches any edit of `b` (adjacent inserts count)."""
    b = list(b)
    for x in a:
        for y in b:
            if x.start < y.end and y.start < x.end:
                return True
            if x.start == y.start or x.end == y.end:
                return True  # two inserts at one point: order would be ambiguous
    return False


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """Apply non-overlapping edits; raises ValueError when two overlap."""
    ordered = sorted(edits, key=lambda e: (e.start, e.end))
    out, cursor = [], 0
    for edit in ordered:
        if edit.start < cursor:
            raise ValueError(f"overlapping edits at offset {edit.start}")
        out.append(text[cursor : edit.start])
        out.append(edit.text)
        cursor = edit.end
    out.append(text[cursor:])
    return "".join(out)
