"""GitHub Actions workflow commands, so findings show up as annotations on the diff."""

from __future__ import annotations

from collections.abc import Iterable

from jaxfix.model import Finding


def _escape(value: str, *, prop: bool = False) -> str:
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def render(findings: Iterable[Finding]) -> str:
    lines = []
    for f in findings:
        props = (
            f"file={_escape(f.path, prop=True)},line={f.line},col={f.column},"
            f"endLine={f.end_line},endColumn={f.end_column},title={_escape(f.code + ' ' + f.name, prop=True)}"
        )
        cell = f"cell {f.cell}: " if f.cell is not None else ""  # a notebook: the line is the cell's
        lines.append(f"::error {props}::{_escape(f'{cell}{f.code} {f.message}')}\n")
    return "".join(lines)


LEVEL = {"verified": "notice", "mismatch": "error", "unverifiable": "warning", "ineffective": "warning"}


def render_applied(fixes: Iterable[Finding]) -> str:
    """One annotation per applied fix: notice when verified, error on a mismatch, else warning."""
    lines = []
    for f in fixes:
        if f.fix is None:
            continue
        ev = f.fix.evidence
        level = LEVEL.get(ev.verdict, "warning") if ev is not None else "warning"
        verdict = f"{ev.verdict}: {ev.detail.splitlines()[0] if ev.detail else ''}" if ev is not None else "not verified"
        props = (
            f"file={_escape(f.path, prop=True)},line={f.line},col={f.column},"
            f"endLine={f.end_line},endColumn={f.end_column},title={_escape(f.code + ' fixed', prop=True)}"
        )
        lines.append(f"::{level} {props}::{_escape(f'{f.code} {f.fix.title} ({verdict})')}\n")
    return "".join(lines)
