"""`# noqa` and `# jaxfix: skip-file`, the two ways a user silences jaxfix."""

from __future__ import annotations

import re

from jaxfix.analysis.comments import noqa_codes
from jaxfix.model import Finding

# A line holding only `# jaxfix: skip-file`. Spaces are matched without line breaks: with `\s*`
# a text of many blank lines backtracked quadratically (0.2 s on a 2,000-line mostly blank text).
_BLANK = r"[^\S\r\n]*"
_SKIP_FILE = re.compile(rf"(?:^|(?<=\r)){_BLANK}#{_BLANK}jaxfix:{_BLANK}skip-file{_BLANK}(?=\r|\n|\Z)", re.MULTILINE)


def skips_file(text: str) -> bool:
    return "skip-file" in text and _SKIP_FILE.search(text) is not None


def is_suppressed(finding: Finding, lines: list[str]) -> bool:
    """A finding is suppressed by a noqa on its first line naming its code (or any prefix of it)."""
    if not 0 < finding.line <= len(lines):
        return False
    codes = noqa_codes(lines[finding.line - 1])
    if codes is None:
        return False
    return not codes or any(finding.code.startswith(c) for c in codes)
