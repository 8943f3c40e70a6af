"""Each fix of a file judged on its own: the original with only that rule's fixes applied.

`fix --verify` used to run one rewritten file holding every fix, so a fix was blamed for what
another fix in the same file changed (a JAX501 wait reported as a mismatch because the JAX101 fix
beside it corrects a stale cache and so changes the losses), and every fix shared the file's
figures (a notebook's timing fixes headlined with the compiles a JAX201 hoist removed).

`split` cuts the applied fixes of a file into parts, one per rule code (several fixes of one rule
in a file are judged together), and gives each part the original text with only its fixes applied,
by running the engine again with only that code selected. A part is trusted only where it is
exactly what the full run applied:

- all parts together must give the very text being verified (else the text was edited by hand, or
  the run had settings the engine cannot reproduce here: the fixes are judged together, as before);
- a part alone must apply the same fixes at the same places. One that does not (its fix only exists
  after another fix ran, or overlaps it) is judged on the file with every fix applied, and its
  verdict says so (`TOGETHER`).

`verified_part` is the other direction, for `--verify --write`: the original with only the fixes
that were verified applied, when those fixes apply alone exactly as in the full run.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from jaxfix.model import Evidence, FileResult, Finding

TOGETHER = "judged with every fix of the file applied: alone, its fix does not apply the same way (it depends on or overlaps another fix)"


@dataclass
class Part:
    findings: list[Finding]  # the applied fixes this part answers for
    text: str  # the original with only these fixes applied
    together: str = ""  # why it is judged with the other fixes ("" = on its own)


def site(finding: Finding) -> tuple:
    return (finding.code, finding.cell, finding.line, finding.column)


def _sites(findings: Iterable[Finding]) -> list[tuple]:
    return sorted(site(f) for f in findings if f.fix is not None)


def _config(findings: list[Finding], base: Any = None):
    from jaxfix.engine.config import Config
    from jaxfix.model import Safety

    codes = tuple(sorted({f.code for f in findings}))
    unsafe = any(f.fix is not None and f.fix.safety is Safety.UNSAFE for f in findings)
    preview = any(f.preview for f in findings)
    if base is not None:
        return replace(base, select=codes, unsafe_fixes=base.unsafe_fixes or unsafe, preview=base.preview or preview)
    return Config(select=codes, unsafe_fixes=unsafe, preview=preview)


def _analyze(result: FileResult, config) -> FileResult:
    # the verifier is a front end: the engine is below it (imported here, where it is needed)
    if result.path.endswith(".ipynb"):
        from jaxfix.engine.notebook import analyze_notebook

        return analyze_notebook(result.source, result.path, config, fix=True)
    from jaxfix.engine import analyze

    return analyze(result.source, result.path, config, fix=True)


def fixed_with(result: FileResult, findings: list[Finding], base: Any = None) -> FileResult | None:
    """The engine's run on `result.source` with only the codes of `findings` selected, when it
    applies exactly `findings` (the same codes at the same places); else None."""
    try:
        alone = _analyze(result, _config(findings, base))
    except Exception:  # noqa: BLE001 - a part the engine cannot reproduce is judged with the others
        return None
    if alone.error or not alone.changed or _sites(alone.fixes_applied) != _sites(findings):
        return None
    return alone


def split(result: FileResult) -> list[Part] | None:
    """The parts to verify one by one, or None where the file's fixes are judged together (one
    rule only, or a text the engine does not reproduce)."""
    applied = [f for f in result.fixes_applied if f.fix is not None]
    codes = sorted({f.code for f in applied})
    if len(codes) < 2 or result.fixed_source is None:
        return None
    whole = fixed_with(result, applied)
    if whole is None or whole.fixed_source != result.fixed_source:
        return None
    parts: list[Part] = []
    tied: list[Finding] = []
    for code in codes:
        group = [f for f in applied if f.code == code]
        alone = fixed_with(result, group)
        if alone is None or alone.fixed_source is None:
            tied.extend(group)
        else:
            parts.append(Part(group, alone.fixed_source))
    if tied:
        parts.append(Part(tied, result.fixed_source, TOGETHER))
    return parts


def said_together(evidence: Evidence, why: str) -> Evidence:
    """`evidence` with `why` (the fix was judged with the others) as its second line and a note."""
    if not why:
        return evidence
    first, _, rest = evidence.detail.partition("\n")
    detail = "\n".join(filter(None, [first, why, rest]))
    return replace(evidence, detail=detail, notes=(*evidence.notes, why), data={**evidence.data, "judged_with_others": True})


def verified_part(result: FileResult, base: Any = None) -> FileResult | None:
    """For `--verify --write` where some fixes were not verified: the engine's run with only the
    verified fixes' codes, when it applies exactly the verified fixes (none of them needs a fix
    that is held back, and no held-back fix of the same rule would come with them); else None.
    The fixes it returns carry the evidence of the verification."""
    applied = [f for f in result.fixes_applied if f.fix is not None]
    good = [f for f in applied if f.fix.evidence is not None and f.fix.evidence.verdict == "verified"]
    if not good or len(good) == len(applied):
        return None
    if any(f.fix.evidence.data.get("judged_with_others") for f in good):
        return None  # verified only together with fixes that are held back
    part = fixed_with(result, good, base)
    if part is None:
        return None
    evidence = {site(f): f.fix.evidence for f in good}
    part.fixes_applied = [
        f.with_fix(replace(f.fix, evidence=evidence[site(f)])) if f.fix is not None and site(f) in evidence else f
        for f in part.fixes_applied
    ]
    return part


def findings_in(path: str, text: str, config: Any) -> list[Finding]:
    """The findings of `text` (a file written with only its verified fixes) under `config`."""
    if path.endswith(".ipynb"):
        from jaxfix.engine.notebook import analyze_notebook

        return analyze_notebook(text, path, config).findings
    from jaxfix.engine import analyze

    return analyze(text, path, config).findings
