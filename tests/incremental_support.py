"""Edits for checking `jaxfix.engine.incremental` against a full analysis of the same text.

An editor session is a sequence of texts; the incremental analyzer must give, for each, exactly
what `engine.analyze` gives. The edits here are the ones that move what the analyzer keys on:
statements deleted, duplicated, swapped, renamed; lines inserted above (everything shifts);
comments after a block (libcst gives indented ones to the block); a name changed inside a
function (its links to other statements change); an import inside a function (the rules read
imports module-wide); a statement re-indented by two spaces a level and one pasted with LF lines
into a CRLF file (libcst stores a newline or indent equal to the one it detects as the default).
"""

from __future__ import annotations

import ast
import zlib
from collections.abc import Iterator

from jaxfix.analysis.chunks import line_starts, split_chunks
from jaxfix.engine import analyze
from jaxfix.engine.config import Config
from jaxfix.engine.incremental import IncrementalAnalyzer

KINDS = (
    "delete",
    "duplicate",
    "swap",
    "shift",
    "footer",
    "rename_use",
    "rename_def",
    "touch",
    "nested_import",
    "reindent",
)


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def _names_in(text: str, chunk) -> list[ast.Name]:
    tree = ast.parse(text)
    return [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Name) and chunk.first_line <= n.lineno <= chunk.last_line and n.lineno == n.end_lineno
    ]


def mutate(text: str, kind: str, i: int) -> str | None:
    """`text` with edit `kind` applied at (or around) top-level statement `i`; None when it cannot be."""
    chunks = split_chunks(text, ast.parse(text))
    if not chunks:
        return None
    c = chunks[i % len(chunks)]
    code = text[c.code_start : c.end]
    if not code.endswith(("\n", "\r")):
        code += "\n"
    new: str | None = None
    if kind == "delete":
        new = text[: c.code_start] + text[c.end :]
    elif kind == "duplicate":
        new = text[: c.end] + ("\n" if not text[: c.end].endswith(("\n", "\r")) else "") + "\n" + code + text[c.end :]
    elif kind == "swap" and len(chunks) > 1:
        d = chunks[(i + 1) % len(chunks)]
        first, second = sorted([c, d], key=lambda x: x.start)
        a, b = text[first.code_start : first.end], text[second.code_start : second.end]
        if a.endswith(("\n", "\r")) and b.endswith(("\n", "\r")):
            new = text[: first.code_start] + b + text[first.end : second.code_start] + a + text[second.end :]
    elif kind == "shift":
        new = text[: c.start] + "\n# a new comment line\n" + text[c.start :]
    elif kind == "nested_import":
        # An import inside a function still binds its name for the whole module's rules.
        new = text[: c.end] + "\n\ndef _imports_late():\n    import numpy as jnp\n    from jax import lax as jax\n" + text[c.end :]
    elif kind == "reindent":
        # Two spaces a level: every line's leading run of spaces halved (a string's lines too:
        # the result must only parse, and both analyses see the same text).
        lines = code.splitlines(keepends=True)
        halved = [" " * ((len(x) - len(x.lstrip(" "))) // 2) + x.lstrip(" ") for x in lines]
        new = text[: c.code_start] + "".join(halved) + text[c.end :]
    elif kind == "footer":
        new = text[: c.end] + "    # indented comment after it\n" + text[c.end :]
    elif kind in ("rename_use", "rename_def"):
        if kind == "rename_def":
            node = ast.parse(code).body[0] if code.strip() else None
            old = getattr(node, "name", None)
            if old is None:
                return None
            new = text[: c.code_start] + code.replace(old, old + "_renamed", 1) + text[c.end :]
        else:
            names = _names_in(text, c)
            if not names:
                return None
            target = names[(i * 7) % len(names)]
            starts = line_starts(text)
            at = starts[target.lineno - 1] + target.col_offset
            line = text[starts[target.lineno - 1] :].encode("utf-8")
            prefix = line[: target.col_offset].decode("utf-8", errors="ignore")
            at = starts[target.lineno - 1] + len(prefix)
            end = at + len(target.id)
            if text[at:end] != target.id:
                return None
            new = text[:at] + "renamed_" + target.id + text[end:]
    elif kind == "touch":
        # Append a statement at the end of the chunk's first line when that line ends a statement.
        line_end = text.find("\n", c.code_start)
        line_end = len(text) if line_end < 0 else line_end
        line = text[c.code_start : line_end]
        if c.first_line == c.last_line and "#" not in line:
            new = text[:line_end] + "; _touched = 0" + text[line_end:]
        else:
            new = text[: c.end] + "_touched = 1\n" + text[c.end :]
    if new is None or new == text or not _parses(new):
        return None
    return new


def mutations(text: str, limit: int | None = None) -> Iterator[tuple[str, str]]:
    """(label, edited text) pairs: every kind at every statement, or `limit` of them spread over both."""
    chunks = split_chunks(text, ast.parse(text))
    pairs = [(kind, i) for i in range(len(chunks)) for kind in KINDS]
    if limit is not None and len(pairs) > limit:
        # Spread: each kind in turn, each at a different statement. The turn starts at a kind
        # the text picks, so many texts with a few edits each still meet every kind.
        first = zlib.crc32(text.encode("utf-8", "surrogatepass"))
        pairs = [(KINDS[(first + k) % len(KINDS)], (k * 5) % len(chunks)) for k in range(limit)]
    for kind, i in pairs:
        new = mutate(text, kind, i)
        if new is not None:
            yield f"{kind}@{i}", new


def _same(a, b) -> str | None:
    if a.findings != b.findings:
        extra = [f"{f.code}:{f.line}" for f in a.findings if f not in b.findings]
        missing = [f"{f.code}:{f.line}" for f in b.findings if f not in a.findings]
        return f"incremental has {extra}, full analysis has {missing}"
    if a.error != b.error:
        return f"error {a.error!r} != {b.error!r}"
    return None


def differences(text: str, *, limit: int | None = None, path: str = "mod.py", config: Config | None = None) -> list[str]:
    """Where the incremental analyzer disagrees with `analyze`, over edits of `text` and back."""
    config = config or Config(select=("JAX",))
    analyzer = IncrementalAnalyzer()
    problems = []
    original = analyze(text, path, config)
    first = analyzer.analyze(text, path, config)
    if (why := _same(first, original)) is not None:
        problems.append(f"open: {why}")
    for label, new in mutations(text, limit):
        got = analyzer.analyze(new, path, config)
        if (why := _same(got, analyze(new, path, config))) is not None:
            problems.append(f"{label}: {why}")
        back = analyzer.analyze(text, path, config)
        if (why := _same(back, original)) is not None:
            problems.append(f"{label}, undone: {why}")
    return problems
