"""JSON: a list of findings with their fixes (and evidence, once verified)."""

from __future__ import annotations

import json
from collections.abc import Iterable

from jaxfix.model import Finding


def finding_to_dict(finding: Finding) -> dict:
    fix = finding.fix
    return {
        "code": finding.code,
        "name": finding.name,
        "path": finding.path,
        "line": finding.line,
        "column": finding.column,
        "end_line": finding.end_line,
        "end_column": finding.end_column,
        "message": finding.message,
        "fix": None
        if fix is None
        else {
            "title": fix.title,
            "safety": fix.safety.value,
            "edits": [{"start": e.start, "end": e.end, "text": e.text} for e in fix.edits],
            "imports": [imp.render() for imp in fix.imports],
            "evidence": None
            if fix.evidence is None
            else {"verdict": fix.evidence.verdict, "detail": fix.evidence.detail, **fix.evidence.data},
        },
    }


def render(findings: Iterable[Finding]) -> str:
    return json.dumps([finding_to_dict(f) for f in findings], indent=2, default=str) + "\n"
