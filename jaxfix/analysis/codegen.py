"""Helpers rules share to build new code that looks like the file's own.

Generated statements are wrapped the way black would wrap them (black is a dependency, imported
only when a fix is built: `jaxfix check` never pays for it).
"""

from __future__ import annotations


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


def quote_counts(node) -> tuple[int, int]:
    """(single-quoted, double-quoted) single-line strings under a libcst `node` holding neither quote."""
    import libcst as cst

    counts = {"'": 0, '"': 0}

    class Count(cst.CSTVisitor):
        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            body = node.value.lstrip("rRbBuUfF")
            if body[:3] not in ("'''", '"""') and body[:1] in counts and "'" not in body[1:-1] and '"' not in body[1:-1]:
                counts[body[0]] += 1

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
    import libcst as cst

    class Pin(cst.CSTTransformer):
        def leave_IndentedBlock(self, original_node, updated_node):
            return updated_node if updated_node.indent is not None else updated_node.with_changes(indent=indent)

    return node.visit(Pin())
