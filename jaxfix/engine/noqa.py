"""`jaxfix check --add-noqa`: suppress today's findings in place, so a big codebase can adopt
jaxfix gradually and fix the backlog later (JAX001 reports the comments once they are stale)."""

from __future__ import annotations

import io
import tokenize
from collections import defaultdict

from jaxfix.analysis.comments import find_noqa
from jaxfix.model import Finding


def _rows_inside_strings(source: str) -> set[int]:
    """Rows whose line end lies inside a multi-line string, where no comment can go."""
    rows: set[int] = set()
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type in (tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", -1)) and token.end[0] > token.start[0]:
                rows.update(range(token.start[0], token.end[0]))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        pass
    return rows


def add_noqa(source: str, findings: list[Finding]) -> tuple[str, int, int]:
    """New text, number of lines given a noqa, number of findings that could not take one."""
    wanted: dict[int, set[str]] = defaultdict(set)
    for finding in findings:
        if finding.code != "JAX001":
            wanted[finding.line].add(finding.code)
    blocked = _rows_inside_strings(source)
    lines = source.splitlines(keepends=True)
    added = skipped = 0
    for row, codes in sorted(wanted.items()):
        if row in blocked or not 0 < row <= len(lines):
            skipped += len(codes)
            continue
        line = lines[row - 1]
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        match = find_noqa(body)
        if match is not None and match.group("colon") is None:
            continue  # a bare noqa already silences everything
        if match is not None:
            present = [c.strip() for c in match.group("codes").split(",")]
            merged = present + sorted(c for c in codes if c not in present)
            body = body[: match.start("codes")] + ", ".join(merged) + body[match.end("codes") :]
        else:
            body = f"{body}  # noqa: {', '.join(sorted(codes))}"
        lines[row - 1] = body + ending
        added += 1
    return "".join(lines), added, skipped
