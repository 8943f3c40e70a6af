"""Bytes <-> text for Python files, keeping what must survive a round trip.

The declared encoding (PEP 263 cookie or BOM) is honoured on the way in and used
again on the way out; newlines are never translated, so CRLF files stay CRLF.
"""

from __future__ import annotations

import codecs
import io
import tokenize
from dataclasses import dataclass


class SourceError(Exception):
    """A file that cannot be treated as Python text; the message is one line."""


@dataclass(frozen=True)
class SourceText:
    text: str
    encoding: str  # codec name as declared, "utf-8-sig" when the file has a BOM

    def encode(self, text: str) -> bytes:
        return text.encode(self.encoding)


def decode(data: bytes) -> SourceText:
    if b"\0" in data:
        raise SourceError("binary file (contains NUL bytes)")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if "invalid or missing encoding declaration" not in exc.msg:
            raise SourceError(f"bad encoding declaration: {exc.msg}") from None
        encoding = "utf-8"  # undeclared and not UTF-8: let the decode below say where
    try:
        codecs.lookup(encoding)
        text = data.decode(encoding)
    except LookupError:
        raise SourceError(f"unknown encoding {encoding!r}") from None
    except UnicodeDecodeError as exc:
        raise SourceError(f"not valid {encoding} at byte {exc.start}") from None
    return SourceText(text=text, encoding=encoding)
