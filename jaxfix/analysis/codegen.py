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
