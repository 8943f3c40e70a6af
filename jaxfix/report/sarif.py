"""SARIF 2.1.0: one run, every rule described, fixes as artifact changes."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from jaxfix import __version__
from jaxfix.engine import registry
from jaxfix.model import Finding
from jaxfix.report.jsonfmt import evidence_to_dict

SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
DOCS = "https://github.com/jaxfix/jaxfix/blob/main/docs/rules/{code}.md"


def _uri(path: str) -> str:
    p = Path(path)
    return p.as_posix() if not p.is_absolute() else p.as_uri()


def _result(f: Finding) -> dict:
    result = {
        "ruleId": f.code,
        "level": "error",
        "message": {"text": f.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": _uri(f.path)},
                    "region": {
                        "startLine": f.line,
                        "startColumn": f.column,
                        "endLine": f.end_line,
                        "endColumn": f.end_column,
                    },
                }
            }
        ],
        "properties": {"fixSafety": None if f.fix is None else f.fix.safety.value},
    }
    if f.cell is not None:  # a notebook: the region is in that cell, and no replacement is in the file's JSON text
        result["properties"]["cell"] = f.cell
        result["message"]["text"] = f"cell {f.cell}: {f.message}"
    elif f.fix is not None and f.fix.edits:
        result["fixes"] = [
            {
                "description": {"text": f.fix.title},
                "artifactChanges": [
                    {
                        "artifactLocation": {"uri": _uri(f.path)},
                        "replacements": [
                            {
                                "deletedRegion": {"charOffset": e.start, "charLength": e.end - e.start},
                                "insertedContent": {"text": e.text},
                            }
                            for e in f.fix.edits
                        ],
                    }
                ],
            }
        ]
    if f.fix is not None and f.fix.evidence is not None:
        ev = evidence_to_dict(f.fix.evidence)
        result["properties"]["evidence"] = {
            "verdict": ev["verdict"], "detail": ev["detail"], "inputSource": ev["input_source"],
            "headline": ev["headline"], "compiles": ev["compiles"], "timePerCall": ev["time_per_call"],
        }
    return result


def render(findings: Iterable[Finding], *, applied: Iterable[Finding] = ()) -> str:
    """`findings` as results; `applied` (the fixes `jaxfix fix` made) too, marked `fixApplied`."""
    results = [_result(f) for f in findings]
    for f in applied:
        result = _result(f)
        verdict = f.fix.evidence.verdict if f.fix is not None and f.fix.evidence is not None else None
        result["level"] = {"verified": "note", "mismatch": "error", "ineffective": "warning"}.get(verdict or "", "warning")
        result["properties"]["fixApplied"] = True
        results.append(result)
    return _log(results)


def _log(results: list[dict]) -> str:
    rules = [
        {
            "id": info.code,
            "name": info.name,
            "shortDescription": {"text": info.summary},
            "fullDescription": {"text": rule.doc().split("\n\n")[0] if rule.doc() else info.summary},
            "helpUri": DOCS.format(code=info.code),
            "properties": {"fixAvailability": info.fix},
        }
        for rule, info in registry.all_codes()
    ]
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "jaxfix",
                        "version": __version__,
                        "informationUri": "https://github.com/jaxfix/jaxfix",
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"
