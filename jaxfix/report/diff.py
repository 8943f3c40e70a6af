"""Unified diffs of fixes, the output of the `jaxfix fix` dry run."""

from __future__ import annotations

import difflib


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith(("\n", "\r")):
        lines[-1] += "\n\\ No newline at end of file\n"
    return lines


def unified_diff(path: str, old: str, new: str) -> str:
    """git-style a/ and b/ prefixes for relative paths; absolute paths are shown as they are."""
    if path.endswith(".ipynb"):  # per changed cell, not the notebook's JSON
        from jaxfix.engine.notebook import cell_diffs

        return cell_diffs(path, old, new)
    old_name, new_name = (path, path) if path.startswith("/") else (f"a/{path}", f"b/{path}")
    return "".join(difflib.unified_diff(_lines(old), _lines(new), fromfile=old_name, tofile=new_name))
