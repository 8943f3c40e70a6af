"""`LineMap.record_edits` (a round's map read off its edits, linear) says what a line diff says."""

from __future__ import annotations

import difflib
import random

from jaxfix.edits import apply_edits, edits_between
from jaxfix.engine.linemap import LineMap
from jaxfix.model import Edit


def _diff_map(old: str, new: str) -> list[int]:
    """The map a whole-text line diff gives (what `LineMap` recorded before issue #33)."""
    old_lines, new_lines = old.splitlines(), new.splitlines()
    last = max(len(old_lines) - 1, 0)
    mapping = [0] * len(new_lines)
    for tag, i1, _i2, j1, j2 in difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False).get_opcodes():
        for k in range(j2 - j1):
            mapping[j1 + k] = i1 + k if tag == "equal" else min(i1, last)
    return mapping


def test_map_from_line_edits_equals_the_line_diff():
    rng = random.Random(1)
    for _ in range(300):
        lines = [f"l{rng.randint(0, 5)}\n" for _ in range(rng.randint(0, 12))]
        new_lines = list(lines)
        for _ in range(rng.randint(1, 3)):
            i, op = rng.randint(0, len(new_lines)), rng.choice("ird")
            if op == "i":
                new_lines.insert(i, f"new{rng.randint(0, 3)}\n")
            elif op == "r" and i < len(new_lines):
                new_lines[i] = f"rep{rng.randint(0, 3)}\n"
            elif op == "d" and i < len(new_lines):
                del new_lines[i]
        old, new = "".join(lines), "".join(new_lines)
        edits = edits_between(old, new)
        assert apply_edits(old, edits) == new
        lines_map = LineMap()
        lines_map.record_edits(old, edits)
        assert [lines_map.original_line(n) - 1 for n in range(1, len(new_lines) + 1)] == _diff_map(old, new)


def test_a_coarse_edit_keeps_the_lines_it_did_not_change():
    """A rewrite replacing a whole loop keeps the body's lines: they map to where they were."""
    old = "a\nwhile c:\n    x = 1\n    y = 2\nz\n"
    new_region = "def body():\n    x = 1\n    y = 2\nloop(body)\n"
    start = old.index("while")
    end = old.index("z")
    lines_map = LineMap()
    lines_map.record_edits(old, [Edit(start, end, new_region)])
    assert [lines_map.original_line(n) for n in range(1, 7)] == [1, 2, 3, 4, 5, 5]
    new = old[:start] + new_region + old[end:]
    assert [n - 1 for n in map(lines_map.original_line, range(1, 7))] == _diff_map(old, new)
