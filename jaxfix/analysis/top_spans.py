"""Where each top-level statement's text lies in the source, read from the lines, not rendered.

A libcst module renders as its header lines, then each statement of its body in turn (its
leading blank and comment lines, its code, and, for a compound statement, the comment lines its
last block keeps), then its footer lines: the renderings tile the source. Rendering every
statement to measure it cost as much as a fifth of the analysis of a file with thousands of
findings (issue #33 item 1). The same offsets follow from the lines: a statement's text starts
`len(leading_lines)` lines (one `EmptyLine` each) above the line of its first token, which the
stdlib tree of the same text gives (`lineno`, or the first decorator's line for a decorated
definition), and ends where the next one starts.

`spans_from_lines` answers None wherever that reading could differ from the rendering (a line
break other than `\\n`, a byte order mark, a text not ending in a newline, a first token not
where it is looked for, a line counted as blank or comment that is not one, a tree that does
not match the module's statements); the caller then renders.
"""

from __future__ import annotations

import ast
import re

import libcst as cst

# What one `EmptyLine` renders as: indentation and whitespace, an optional comment, a newline.
_EMPTY_LINE = re.compile(r"[ \t\f]*(?:#[^\n]*)?\n")
_NEWLINE = re.compile(r"\n")


def spans_from_lines(
    module: cst.Module, source: str, tree: ast.Module
) -> dict[cst.CSTNode, tuple[int, int]] | None:
    """Offsets of each top-level statement's text in `source` (`tree` is `ast.parse(source)`, the
    text `module` was parsed from), as rendering each statement would measure them; None when
    the lines cannot tell (see the module's text)."""
    if "\r" in source or source.startswith("\ufeff") or not source.endswith("\n"):
        return None
    starts = [0, *(m.end() for m in _NEWLINE.finditer(source))]  # starts[n - 1]: offset of line n
    line_count = len(starts) - 1  # the text ends in a newline: starts[-1] is its end

    def empty(first: int, last: int) -> bool:
        """Lines first..last (1-based, inclusive) each render as an `EmptyLine`."""
        return all(_EMPTY_LINE.fullmatch(source, starts[n - 1], starts[n]) for n in range(first, last + 1))

    stdlib = tree.body
    found: dict[cst.CSTNode, tuple[int, int]] = {}
    opened: list[tuple[cst.CSTNode, int]] = []  # (statement, line its text starts on)
    at = 0  # index into the stdlib statements
    previous_end = len(module.header)  # last line of what comes before (the header's last line)
    for statement in module.body:
        count = len(statement.body) if isinstance(statement, cst.SimpleStatementLine) else 1
        if at + count > len(stdlib):
            return None
        first, last = stdlib[at], stdlib[at + count - 1]
        at += count
        code_line = _first_token_line(statement, first, source, starts)
        if code_line is None:
            return None
        start_line = code_line - len(statement.leading_lines)
        # what lies between the code before and this text: the comment lines a block keeps
        if start_line <= previous_end or not empty(previous_end + 1, code_line - 1):
            return None
        opened.append((statement, start_line))
        previous_end = last.end_lineno or last.lineno
    if at != len(stdlib):
        return None
    footer_start = line_count - len(module.footer) + 1
    if footer_start <= previous_end or not empty(previous_end + 1, line_count):
        return None
    if opened and opened[0][1] != len(module.header) + 1:
        return None  # the header is not the lines before the first statement's text
    ends = [start for _, start in opened[1:]] + [footer_start]
    for (statement, start_line), end_line in zip(opened, ends):
        found[statement] = (starts[start_line - 1], starts[end_line - 1])
    return found


def _first_token_line(statement: cst.CSTNode, first: ast.stmt, source: str, starts: list[int]) -> int | None:
    """The line of `statement`'s first token (`first`: its first stdlib statement): the first
    decorator's `@`, else the statement's own first token (at column 0 at the top level)."""
    decorators = getattr(statement, "decorators", ())
    stdlib_decorators = getattr(first, "decorator_list", [])
    if len(decorators) != len(stdlib_decorators):
        return None
    if decorators:
        line = stdlib_decorators[0].lineno  # the expression's line: the `@` must open it
        return line if source.startswith("@", starts[line - 1]) else None
    return first.lineno if first.col_offset == 0 else None
