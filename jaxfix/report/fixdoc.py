"""`jaxfix fix --output-format json`: one JSON document for the whole run, in place of the diffs.

Per applied fix: the finding, its fix, whether it was written or held back, and (with --verify)
its evidence with the fixed fields of `jsonfmt.evidence_to_dict` (verdict, input_source,
compiles and time_per_call as [original, rewritten]). Per changed file: its unified diff. The
shape is pinned by `fix_schema.SCHEMA`.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from jaxfix.model import FileResult, Finding
from jaxfix.report.diff import unified_diff
from jaxfix.report.jsonfmt import finding_to_dict

VERSION = 1


@dataclass(frozen=True)
class FixRun:
    """What `jaxfix fix` did, as the CLI knows it once the files are (or are not) written."""

    results: list[FileResult]  # every file processed
    write: bool
    verify: bool
    written: frozenset[str]  # paths written
    held_back: frozenset[str]  # paths whose fixes were not written (unverified, dirty, write error)
    errors: tuple[str, ...] = ()


def _verdict(f: Finding) -> str:
    if f.fix is None or f.fix.evidence is None:
        return "not verified"
    return f.fix.evidence.verdict


def document(run: FixRun) -> dict:
    fixes, files, remaining = [], [], []
    for result in run.results:
        remaining.extend(finding_to_dict(f) for f in result.remaining)
        if not result.changed:
            continue
        written, held = result.path in run.written, result.path in run.held_back
        files.append(
            {
                "path": result.path,
                "fixes": len(result.fixes_applied),
                "written": written,
                "held_back": held,
                "diff": unified_diff(result.path, result.source, result.fixed_source or result.source),
            }
        )
        for f in result.fixes_applied:
            fixes.append({**finding_to_dict(f), "written": written, "held_back": held})
    verdicts = Counter(_verdict(f) for r in run.results if r.changed for f in r.fixes_applied)
    return {
        "version": VERSION,
        "mode": "write" if run.write else "dry-run",
        "verify": run.verify,
        "fixes": fixes,
        "files": files,
        "remaining": remaining,
        "summary": {
            "fixes": len(fixes),
            "verified": verdicts["verified"],
            "mismatch": verdicts["mismatch"],
            "unverifiable": verdicts["unverifiable"],
            "ineffective": verdicts["ineffective"],
            "not_verified": verdicts["not verified"],
            "files_changed": len(files),
            "files_written": sum(1 for f in files if f["written"]),
            "remaining": len(remaining),
        },
        "errors": list(run.errors),
    }


def render(run: FixRun) -> str:
    return json.dumps(document(run), indent=2, default=str) + "\n"


def applied(results: Iterable[FileResult]) -> list[Finding]:
    return [f for r in results if r.changed for f in r.fixes_applied]
