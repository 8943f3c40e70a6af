"""A libcst module assembled from top-level chunks parsed one at a time.

Parsing is a third of a full analysis. An editor session changes one or two statements at a
time, so the language server parses each chunk (`analysis.chunks`) once, by its text, and
assembles the module from the parsed statements: the same tree `cst.parse_module` gives for
the whole text (`tests/test_incremental.py` checks that with `deep_equals` on every fixture).
libcst stores a newline or a block's indentation as "the module's default" (None) when it
equals the default it detected, and its native parser detects them from the text it is given,
whatever the config says: a chunk parsed alone uses its own first newline and first indented
block. A chunk whose detected layout differs from the module's would therefore render with the
module's (a `\n` line of a CRLF file as `\r\n`, a two-space block as four) and is refused
(None; the caller parses the whole text), as are two layouts that would be stored differently:
indented comment lines after a block, which libcst gives to the block, not to the next
statement, and a text starting with a byte order mark.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass

import libcst as cst

from jaxfix.analysis.chunks import default_indent, first_newline, line_starts, split_chunks
from jaxfix.analysis.cstparse import parse_module

_INDENTED_LINE = re.compile(r"^[ \t\f]", re.MULTILINE)


@dataclass(frozen=True)
class ParsedChunk:
    """One chunk's parse: its leading blank and comment lines, and its statements."""

    leading: tuple[cst.EmptyLine, ...]
    statements: tuple[cst.BaseStatement, ...]


def parse_chunk(text: str, code_at: int, config: cst.PartialParserConfig) -> ParsedChunk | None:
    """`text` (leading lines, then statements from offset `code_at`) parsed alone; None when its
    leading lines hold an indented line (they may belong to the block before it)."""
    if _INDENTED_LINE.search(text, 0, code_at):
        return None
    try:
        alone = parse_module(text, config)
    except (cst.ParserSyntaxError, RecursionError):
        return None
    if alone.footer or not alone.body or not _same_defaults(alone, text, config):
        return None
    return ParsedChunk(tuple(alone.header), tuple(alone.body))


def _same_defaults(alone: cst.Module, text: str, config: cst.PartialParserConfig) -> bool:
    """Whether `alone` stores its newlines and block indents as the module of `config` would.

    A text with no newline stores none (its last line's is the module's, or absent); one of
    simple statements, or of comment lines only, has no indented block.
    """
    if alone.default_newline != config.default_newline and ("\n" in text or "\r" in text):
        return False
    if alone.default_indent != config.default_indent:
        return all(isinstance(statement, cst.SimpleStatementLine) for statement in alone.body)
    return True


def assemble(
    chunks: Sequence[ParsedChunk], trailing: str, *, indent: str, newline: str, has_trailing_newline: bool
) -> cst.Module | None:
    """The module of `chunks` in order followed by `trailing` (blank and comment lines); None when
    the trailing lines could belong to the last block or start with another newline."""
    if not chunks or _INDENTED_LINE.search(trailing):
        return None
    footer: tuple[cst.EmptyLine, ...] = ()
    if trailing:
        config = cst.PartialParserConfig(default_indent=indent, default_newline=newline)
        try:
            rest = parse_module(trailing, config)
        except cst.ParserSyntaxError:
            return None
        if rest.body or not _same_defaults(rest, trailing, config):
            return None
        footer = (*rest.header, *rest.footer)
    body: list[cst.BaseStatement] = []
    for i, chunk in enumerate(chunks):
        first, *others = chunk.statements
        if i and chunk.leading:
            first = first.with_changes(leading_lines=(*chunk.leading, *first.leading_lines))
        body += [first, *others]
    return cst.Module(
        body=body,
        header=chunks[0].leading,
        footer=footer,
        default_indent=indent,
        default_newline=newline,
        has_trailing_newline=has_trailing_newline,
    )


def parse_in_chunks(
    source: str, tree: ast.Module, parsed_out: list[tuple[str, cst.PartialParserConfig, ParsedChunk]] | None = None
) -> cst.Module | None:
    """`cst.parse_module(source)` (`tree`: `ast.parse(source)`), assembled from its top-level chunks
    parsed one at a time; None when a chunk or the layout is refused (the caller parses whole).
    `parsed_out` gets each chunk's text, the config it was parsed with and its parse (what the
    fix loop's rescans reuse of the chunks a round left as they were).

    libcst's native parser takes longer per line the longer its text: a 50,000-line file parsed
    whole took 4.7 s, its 5,885 chunks 3.7 s, and a 10,000-line module of jax 1.02 s against 0.80 s
    (issue #33 item 1)."""
    if source.startswith("\ufeff"):
        return None
    starts = line_starts(source)
    chunks = split_chunks(source, tree, starts)
    if len(chunks) < 2:
        return None
    indent, newline = default_indent(source, tree, starts), first_newline(source)
    config = cst.PartialParserConfig(default_indent=indent, default_newline=newline)
    parsed = []
    for chunk in chunks:
        one = parse_chunk(chunk.text, chunk.code_start - chunk.start, config)
        if one is None:
            return None
        parsed.append(one)
    module = assemble(
        parsed,
        source[chunks[-1].end :],
        indent=indent,
        newline=newline,
        has_trailing_newline=source.endswith(("\n", "\r")),
    )
    if module is not None and parsed_out is not None:
        parsed_out.extend((chunk.text, config, one) for chunk, one in zip(chunks, parsed))
    return module
