"""The comments of a text, as the tokenizer sees them (a `#` inside a string is not one)."""

from __future__ import annotations

import io
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
