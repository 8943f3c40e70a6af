"""Verify an edit of the user's own: `jaxfix verify --base REF PATH` / `--original FILE PATH`.

A `manual` finding has no automatic fix; the user writes one. This verifies the difference
between the original (the file at git commit REF, or another file) and the file as edited, with
the same inputs and evidence as a fix jaxfix made: the findings of the original that lie in the
changed callables choose the reference (a control-flow finding: the original run eagerly) and the
family's figure, and each changed callable gets its verdict.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from jaxfix.model import Finding


class EditError(Exception):
    """The original text cannot be read (not a git work tree, no such commit or file)."""


def original_text(path: str, *, base: str | None = None, original: str | None = None) -> str:
    """The text to compare `path` against: `original` (a file) or `path` at git commit `base`."""
    if original is not None:
        try:
            return Path(original).read_text(encoding="utf-8")
        except OSError as exc:
            raise EditError(f"cannot read --original {original}: {exc.strerror or exc}") from None
    if base is None:
        raise EditError("give --base REF or --original FILE")
    target = Path(path).resolve()
    try:
        top = subprocess.run(
            ["git", "-C", str(target.parent), "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        raise EditError(f"{path}: not in a git work tree (--base needs one; use --original FILE)") from None
    relative = target.relative_to(Path(top).resolve()).as_posix()
    shown = subprocess.run(["git", "-C", top, "show", f"{base}:{relative}"], capture_output=True, text=True)
    if shown.returncode != 0:
        raise EditError(f"{path}: not found at {base} ({shown.stderr.strip().splitlines()[-1] if shown.stderr.strip() else 'git show failed'})")
    return shown.stdout


def findings_in_changes(findings: list[Finding], original: str, edited: str) -> list[Finding]:
    """The original's findings inside the callables the edit changed (the edit's subject), each
    with its fix dropped: it is the user's edit that is verified, not jaxfix's rewrite."""
    from jaxfix.verify.changed import changed_callables

    changes = changed_callables(original, edited)
    spans = [(c.original.start_line, c.original.end_line) for c in changes.callables if c.original is not None and c.status == "changed"]
    return [f.with_fix(None) for f in findings if any(start <= f.line <= end for start, end in spans)]


def verify_edits(paths: list[str], *, base: str | None, original: str | None, echo, **options) -> int:
    """Verify each edited file against its original; print one verdict per changed callable (and
    its evidence below it). Returns the exit status: 1 on a mismatch, 2 on an error, else 0."""
    from jaxfix.engine.config import Config
    from jaxfix.engine.pipeline import analyze
    from jaxfix.verify.api import verify_change

    status = 0
    files = [str(f) for p in paths for f in (sorted(Path(p).rglob("*.py")) if Path(p).is_dir() else [Path(p)])]
    for path in files:
        try:
            before = original_text(path, base=base, original=original)
            edited = Path(path).read_text(encoding="utf-8")
        except (EditError, OSError) as exc:
            if len(files) > 1 and Path(path) != Path(paths[0]):
                continue  # in a folder: a file new since REF has no original to verify against
            echo(f"jaxfix: {exc}", err=True)
            status = 2
            continue
        if before == edited:
            continue
        try:
            findings = analyze(before, path, Config()).findings
        except Exception:  # noqa: BLE001 - an original jaxfix cannot analyse still runs; no family figure
            findings = []
        subject = findings_in_changes(findings, before, edited)
        verification = verify_change(before, edited, path, findings=subject, **options)
        for note in verification.notes:
            echo(f"{path}: {note}", err=True)
        against = f"--original {original}" if original is not None else f"{base}"
        if not verification.units:
            echo(f"{path}: {verification.evidence.verdict}: {verification.evidence.detail} (against {against})")
        for unit in verification.units:
            ev = unit.evidence
            first, *rest = ev.detail.splitlines() or [""]
            codes = ",".join(sorted({f.code for f in subject})) or "edit"
            echo(f"{path}: {unit.name} ({codes}, against {against}) {ev.verdict}: {first}")
            for line in rest:
                echo(f"    {line}")
            if ev.verdict == "mismatch":
                status = max(status, 1)
    return status
