"""Findings -> LSP diagnostics, and back again for code actions.

Each diagnostic carries the rule code, a link to the rule's page
(`codeDescription`), source "jaxfix", the finding's range in the negotiated
encoding, and in `data` what the editor (and our own code-action handler) needs:
the code, the finding's 1-based position, and whether a fix exists and how safe
it is.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from jaxfix.lsp.positions import LineIndex
from jaxfix.model import Finding

SOURCE = "jaxfix"
DOCS_URL = "https://github.com/jaxfix/jaxfix/blob/main/docs/rules/{code}.md"


def docs_url(code: str) -> str:
    return DOCS_URL.format(code=code)


def fix_kind(finding: Finding) -> str:
    """ "safe", "unsafe" or "manual" for a finding with a fix, "none" without one."""
    if finding.fix is None:
        return "none"
    if finding.fix.safety.value != "manual" and not finding.fix.edits:
        return "none"
    return finding.fix.safety.value


def finding_key(finding: Finding) -> list[Any]:
    """What identifies a finding within one version of a document."""
    return [finding.code, finding.line, finding.column, finding.end_line, finding.end_column]


def to_diagnostic(finding: Finding, index: LineIndex, version: int | None) -> types.Diagnostic:
    kind = fix_kind(finding)
    return types.Diagnostic(
        range=index.range_of(finding.line, finding.column, finding.end_line, finding.end_column),
        message=finding.message,
        severity=types.DiagnosticSeverity.Warning,
        code=finding.code,
        code_description=types.CodeDescription(href=docs_url(finding.code)),
        source=SOURCE,
        data={
            "key": finding_key(finding),
            "fix": kind,  # "safe" | "unsafe" | "manual" | "none"
            "fixable": kind in ("safe", "unsafe"),
            "version": version,
        },
    )


def key_of_diagnostic(diagnostic: types.Diagnostic) -> list[Any] | None:
    data = diagnostic.data
    if isinstance(data, dict) and isinstance(data.get("key"), list):
        return data["key"]
    return None


def match_findings(
    diagnostics: list[types.Diagnostic], findings: list[Finding], index: LineIndex
) -> list[tuple[types.Diagnostic, Finding]]:
    """Pair the diagnostics a code-action request names with our current findings.

    By the key in `data` when the client sent it back, else (clients without
    `dataSupport`) by code and range.
    """
    pairs = []
    for diagnostic in diagnostics:
        if diagnostic.source not in (None, SOURCE):
            continue
        key = key_of_diagnostic(diagnostic)
        for finding in findings:
            if key is not None:
                hit = finding_key(finding) == key
            else:
                hit = str(diagnostic.code) == finding.code and to_range(finding, index) == diagnostic.range
            if hit:
                pairs.append((diagnostic, finding))
                break
    return pairs


def to_range(finding: Finding, index: LineIndex) -> types.Range:
    return index.range_of(finding.line, finding.column, finding.end_line, finding.end_column)
