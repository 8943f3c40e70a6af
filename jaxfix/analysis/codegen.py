"""Helpers rules share to build new code that looks like the file's own.

Generated statements are wrapped the way black would wrap them (black is a dependency, imported
only when a fix is built: `jaxfix check` never pays for it).
"""

from __future__ import annotations

import re


def black_format(code: str, line_length: int) -> str:
    """`code` as black formats it at `line_length`; unchanged when black cannot (formatting is
    cosmetic: the generated code is correct either way)."""
    try:
        import black
    except ImportError:  # pragma: no cover - black is a dependency
        return code
    try:
        return black.format_str(code, mode=black.Mode(line_length=line_length))
    except Exception:  # noqa: BLE001 - never fail a fix over layout
        return code


def preferred_quote(module) -> str:
    """The quote character the file writes its strings with: `'` when its single-line single-quoted
    strings outnumber the double-quoted ones, else `"` (black's choice, and the default)."""
    single, double = quote_counts(module)
    return quote_of(single, double)


def quote_of(single: int, double: int) -> str:
    """`preferred_quote` from the counts of `quote_counts` (summed over a file's parts)."""
    return "'" if single > double else '"'


def text_quote_counts(text: str) -> tuple[int, int] | None:
    """`quote_counts` of the module `text` without building its libcst tree: its string tokens
    (an f-string, one token before Python 3.12, is parsed to count the strings inside its braces,
    as libcst does). The tokens are read by `_STRING_OR_COMMENT`, which finds the strings and
    comments from left to right as the tokenizer does on a text that parses: `tokenize` cost
    0.5 s of a 50,000-line file's check (issue #33 item 1). None when a quote is left open or
    libcst rejects an f-string."""
    single = double = 0
    try:
        for match in _STRING_OR_COMMENT.finditer(text):
            if match.lastgroup == "string":
                counted = string_token_quotes(match.group())
                single, double = single + counted[0], double + counted[1]
            elif match.lastgroup == "open":
                return None
    except Exception:  # noqa: BLE001 - an f-string libcst rejects: count otherwise
        return None
    return single, double


# A comment, a string literal with its prefix, or a quote that does not close (`open`). A prefix
# letter right after a name's character belongs to the name (the quote then opens a plain string).
_STRING_OR_COMMENT = re.compile(
    r"(?P<comment>#[^\r\n]*)"
    r"|(?P<string>(?:(?<!\w)[rRbBuUfF]{1,2})?"
    r"(?:'''(?:[^'\\]|\\.|'(?!''))*'''"
    r'|"""(?:[^"\\]|\\.|"(?!""))*"""'
    r"|'(?:[^'\\\r\n]|\\.)*'"
    r'|"(?:[^"\\\r\n]|\\.)*"))'
    r"|(?P<open>['\"])",
    re.S,
)


def string_token_quotes(value: str) -> tuple[int, int]:
    """What one string token adds to `quote_counts`: itself, or for an f-string, the plain strings
    inside its braces (libcst's `SimpleString`s there)."""
    prefix = value[: len(value) - len(value.lstrip("rRbBuUfF"))]
    if "f" in prefix or "F" in prefix:
        import libcst as cst

        return quote_counts(cst.parse_expression(value))
    counted = _counted_quote(value)
    return int(counted == "'"), int(counted == '"')


def _counted_quote(value: str) -> str | None:
    """The quote a string literal counts for in `preferred_quote` (None: it counts for neither)."""
    body = value.lstrip("rRbBuUfF")
    if body[:3] not in ("'''", '"""') and body[:1] in ("'", '"') and "'" not in body[1:-1] and '"' not in body[1:-1]:
        return body[0]
    return None


def quote_counts(node) -> tuple[int, int]:
    """(single-quoted, double-quoted) single-line strings under a libcst `node` holding neither quote."""
    import libcst as cst

    counts = {"'": 0, '"': 0}

    class Count(cst.CSTVisitor):
        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            quote = _counted_quote(node.value)
            if quote is not None:
                counts[quote] += 1

    node.visit(Count())
    return counts["'"], counts['"']


def string_literal(value: str, quote: str) -> str:
    """A Python string literal for `value` in the file's `quote`, the other quote when `value` holds it."""
    text = repr(value)[1:-1].replace("\\'", "'")
    if quote in value and ("'" if quote == '"' else '"') not in value:
        quote = "'" if quote == '"' else '"'
    return quote + (text.replace(quote, "\\" + quote) if quote in text else text) + quote


def pin_indent(node, indent: str):
    """`node` (parsed from generated text) with each block that has the parse's default indentation
    indented by `indent`, the step of the block it goes into. libcst leaves such a block's
    `indent` unset, and an unset one renders with the *file's* default wherever it is placed: a
    new body in a 2-space function of a 4-space module would come out 6 spaces deep."""
    return node.visit(_pin_class()(indent))


def _pin_class() -> type:
    """The transformer of `pin_indent`, made once (libcst imported lazily here): a class made per
    call costs every later `isinstance` against libcst's visitor ABCs a walk over all of them."""
    global _PIN
    if _PIN is None:
        import libcst as cst

        # Blocks live in compound statements and their clauses only: the expressions and simple
        # statements are not visited (a visit rebuilds each node it enters).
        holders = (
            cst.BaseCompoundStatement,
            cst.BaseSuite,
            cst.Else,
            cst.ExceptHandler,
            cst.ExceptStarHandler,
            cst.Finally,
            cst.MatchCase,
        )

        class Pin(cst.CSTTransformer):
            def __init__(self, indent: str) -> None:
                super().__init__()
                self.indent = indent

            def on_visit(self, node) -> bool:
                return isinstance(node, holders)

            def leave_IndentedBlock(self, original_node, updated_node):
                return (
                    updated_node if updated_node.indent is not None else updated_node.with_changes(indent=self.indent)
                )

        _PIN = Pin
    return _PIN


_PIN: type | None = None
