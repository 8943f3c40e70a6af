"""Unified diffs of fixes, the output of the `jaxfix fix` dry run."""

from __future__ import annotations

import difflib


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def unified_diff(path: str, old: str, new: str) -> str:
    return "".join(difflib.unified_diff(_lines(old), _lines(new), fromfile=f"a/{path}", tofile=f"b/{path}"))
