"""The comments of a text, as the tokenizer sees them (a `#` inside a string is not one), and the
one parser of `# noqa` comments (suppression, `--add-noqa` and JAX001 read them alike)."""

from __future__ import annotations

import io
import re
import tokenize

Comment = tuple[int, int, str]  # (1-based row, 0-based column, text)


def comments_in(text: str) -> tuple[list[Comment], bool]:
    """The comment tokens of `text` up to where the tokenizer stops, and whether it got to the end."""
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                found.append((token.start[0], token.start[1], token.string))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return found, False
    return found, True


# The one `# noqa` parser. `colon` is set when codes follow (`# noqa: JAX201, E501`); without it
# the comment is a bare `# noqa`, which silences every code on its line.
NOQA = re.compile(r"#\s*noqa(?P<colon>:\s*(?P<codes>[A-Za-z]+[0-9]*(?:\s*,\s*[A-Za-z]+[0-9]*)*))?", re.IGNORECASE)


def find_noqa(text: str) -> re.Match[str] | None:
    """The first `# noqa` in `text`, bare or with codes: the one that decides what a line silences."""
    return NOQA.search(text)


def find_noqa_with_codes(text: str) -> re.Match[str] | None:
    """The first `# noqa: CODES` in `text` (a bare `# noqa` before it is skipped): the codes a
    comment names, which JAX001 judges one by one."""
    return next((match for match in NOQA.finditer(text) if match.group("codes") is not None), None)


def noqa_codes(line: str) -> frozenset[str] | None:
    """None when the line has no noqa; an empty set for a bare `# noqa` (all codes)."""
    match = find_noqa(line)
    if match is None:
        return None
    codes = match.group("codes")
    if not codes:
        return frozenset()
    return frozenset(c.strip().upper() for c in codes.split(","))
