"""Text for the CLI: the evidence under each diff, the held-back list, and a one-line summary."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from jaxfix.model import Finding
from jaxfix.report.text import where

MARK = {"verified": "verified", "mismatch": "MISMATCH", "unverifiable": "unverifiable", "ineffective": "ineffective"}


def fixes_with_evidence(findings: Iterable[Finding]) -> list[Finding]:
    return [f for f in findings if f.fix is not None and f.fix.evidence is not None]


def evidence_lines(findings: Iterable[Finding], indent: str = "  ") -> str:
    """One block per applied fix: `path:line:col: CODE verdict: detail` (detail lines indented)."""
    out = []
    for finding in fixes_with_evidence(findings):
        ev = finding.fix.evidence
        first, *rest = ev.detail.splitlines() or [""]
        out.append(f"{indent}{where(finding)}: {finding.code} {MARK[ev.verdict]}: {first}\n")
        out.extend(f"{indent}    {line}\n" for line in rest)
    return "".join(out)


def summary(findings: Iterable[Finding]) -> str:
    """`Verified 2 of 3 fixes; 0 mismatch; 1 unverifiable. Inputs: example 1, synthesized 1.`"""
    # one entry per site: a fix listed twice (the same finding reached from two files' lists) counts once
    sites = {(f.path, f.line, f.column, f.code): f.fix.evidence for f in fixes_with_evidence(findings)}
    evidences = list(sites.values())
    counts = Counter(ev.verdict for ev in evidences)
    sources = Counter(ev.input_source for ev in evidences if ev.verdict == "verified" and ev.input_source)
    total = sum(counts.values())
    kinds = sorted({"no compile removed" if ev.data.get("payoff") else ev.headline or "no saving" for ev in evidences if ev.verdict == "ineffective"})
    ineffective = f"; {counts['ineffective']} ineffective ({', '.join(kinds)})" if counts["ineffective"] else ""
    line = (
        f"Verified {counts['verified']} of {total} fix{'es' if total != 1 else ''}"
        f"; {counts['mismatch']} mismatch{ineffective}; {counts['unverifiable']} unverifiable."
    )
    if sources:
        line += " Inputs: " + ", ".join(f"{source} {n}" for source, n in sorted(sources.items())) + "."
    return line + "\n"
