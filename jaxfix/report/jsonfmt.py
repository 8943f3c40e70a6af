"""JSON: a list of findings with their fixes (and evidence, once verified)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from jaxfix.model import Evidence, Finding


def finding_to_dict(finding: Finding) -> dict:
    fix = finding.fix
    return {
        "code": finding.code,
        "name": finding.name,
        "path": finding.path,
        "cell": finding.cell,  # a notebook's cell (1-based), whose lines the positions count; else null
        "line": finding.line,
        "column": finding.column,
        "end_line": finding.end_line,
        "end_column": finding.end_column,
        "message": finding.message,
        "preview": finding.preview,  # shown in preview mode only (`--preview`)
        "fix": None
        if fix is None
        else {
            "title": fix.title,
            "safety": fix.safety.value,
            "edits": [{"start": e.start, "end": e.end, "text": e.text} for e in fix.edits],
            "imports": [imp.render() for imp in fix.imports],
            "unused_imports": [imp.render() for imp in fix.unused_imports],
            "evidence": None if fix.evidence is None else evidence_to_dict(fix.evidence),
        },
    }


def _pair(value: Any) -> list | None:
    if isinstance(value, list | tuple) and len(value) == 2:
        return list(value)
    return None


def evidence_to_dict(evidence: Evidence) -> dict:
    """The numbers of `evidence.data`, then the fields every verdict carries (fixed names, for tools).

    `compiles` and `time_per_call` are [original, rewritten] (steady state; seconds) or null when
    nothing ran; `input_source` says where the inputs came from ("" when there were none).
    """
    data = evidence.data
    return {
        **data,
        "verdict": evidence.verdict,
        "detail": evidence.detail,
        "input_source": evidence.input_source or str(data.get("source") or ""),
        "family": evidence.family,
        "headline": evidence.headline,
        "notes": list(evidence.notes),
        "inputs": data.get("inputs") if isinstance(data.get("inputs"), int) else None,
        "compiles": _pair(data.get("compiles")),
        "time_per_call": _pair(data.get("time_per_call")),
    }


def render(findings: Iterable[Finding]) -> str:
    return json.dumps([finding_to_dict(f) for f in findings], indent=2, default=str) + "\n"
