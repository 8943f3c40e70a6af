"""The batch-migration report: per rule found / fixed / verified / held back / manual, per file,
and the manual follow-ups with their locations. Markdown for people, JSON for tools."""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path

from jaxfix.model import FileResult, Finding, Safety

COLUMNS = ("found", "fixed", "verified", "held_back", "manual")


def _key(f: Finding) -> tuple:
    return (f.path, f.line, f.column, f.code)


def tally(results: list[FileResult], written: bool, not_written: frozenset[str] = frozenset()) -> dict:
    """`not_written`: files whose fixes were held back (unverified, dirty, unwritable)."""
    per_rule: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(COLUMNS, 0))
    per_file: dict[str, dict[str, int]] = defaultdict(lambda: dict.fromkeys(COLUMNS, 0))
    manual: list[dict] = []
    for result in results:
        applied = {_key(f): f for f in result.fixes_applied}  # these carry the evidence, if verified
        held = result.path in not_written
        for f in result.findings:
            rows = (per_rule[f.code], per_file[result.path])
            fix = f.fix
            done = applied.get(_key(f))
            evidence = done.fix.evidence if done is not None and done.fix is not None else None
            counts = {
                "found": 1,
                "fixed": int(done is not None and not held),
                "verified": int(evidence is not None and evidence.verdict == "verified"),
                "held_back": int(done is not None and held),
                "manual": int(fix is None or fix.safety is Safety.MANUAL),
            }
            for row in rows:
                for column, value in counts.items():
                    row[column] += value
            if counts["manual"]:
                manual.append(
                    {"path": f.path, "line": f.line, "column": f.column, "code": f.code, "message": f.message,
                     "guidance": fix.title if fix is not None else None}
                )
    return {
        "mode": "written" if written else "dry-run",
        "per_rule": dict(sorted(per_rule.items())),
        "per_file": dict(sorted(per_file.items())),
        "manual": manual,
        "errors": [{"path": r.path, "error": r.error} for r in results if r.error],
    }


def to_markdown(data: dict) -> str:
    head = "| {} | " + " | ".join(c.replace("_", " ") for c in COLUMNS) + " |"
    rule = "| --- |" + " ---: |" * len(COLUMNS)
    lines = [f"# jaxfix migration report ({data['mode']})", "", "## Per rule", "", head.format("rule"), rule]
    lines += [f"| {code} | " + " | ".join(str(row[c]) for c in COLUMNS) + " |" for code, row in data["per_rule"].items()]
    lines += ["", "## Per file", "", head.format("file"), rule]
    lines += [f"| {path} | " + " | ".join(str(row[c]) for c in COLUMNS) + " |" for path, row in data["per_file"].items()]
    lines += ["", "## Manual follow-ups", ""]
    lines += [f"- `{m['path']}:{m['line']}:{m['column']}` {m['code']}: {m['message']}" + (f" ({m['guidance']})" if m["guidance"] else "") for m in data["manual"]] or ["None."]
    if data["errors"]:
        lines += ["", "## Files that could not be processed", ""]
        lines += [f"- `{e['path']}`: {e['error']}" for e in data["errors"]]
    return "\n".join(lines) + "\n"


def write_report(path: Path, results: list[FileResult], written: bool, not_written: frozenset[str] = frozenset()) -> None:
    data = tally(results, written, not_written)
    text = json.dumps(data, indent=2) + "\n" if path.suffix == ".json" else to_markdown(data)
    path.write_text(text, encoding="utf-8")
