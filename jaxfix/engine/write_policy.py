"""Which fixed files may be written, and writing them: the policy every front end shares.

- A file with uncommitted changes is refused unless the user allows it: the user's own edits and
  the fix would be mixed in one change that `git checkout` can no longer take apart.
- With verification, a file is written only when every fix applied to it was verified. A file's
  fixes are verified together, so they are written (or held back) together.
- Writing is atomic, in the file's own encoding, and never over a file that changed since it was
  read (`writer.write_atomic`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from jaxfix.engine.gitutil import GitError, dirty_files
from jaxfix.engine.runner import FileOutcome
from jaxfix.engine.writer import WriteError, write_atomic
from jaxfix.model import Finding


def refuse_dirty(changed: list[FileOutcome]) -> tuple[list[FileOutcome], list[str]]:
    """The files that may be written, and one error line per file with uncommitted changes."""
    try:
        dirty = dirty_files([Path(o.result.path) for o in changed])
    except GitError as exc:
        return changed, [f"cannot ask git which files are dirty: {exc}"]
    refused = [o for o in changed if Path(o.result.path).resolve() in dirty]
    errors = [f"{o.result.path}: has uncommitted changes; not written (use --allow-dirty)" for o in refused]
    return [o for o in changed if Path(o.result.path).resolve() not in dirty], errors


def all_verified(findings: Iterable[Finding]) -> bool:
    """Whether a file's applied fixes may be written under `--verify`: each one verified."""
    applied = [f for f in findings if f.fix is not None]
    return bool(applied) and all(f.fix.evidence is not None and f.fix.evidence.verdict == "verified" for f in applied)


def held_back(path: str, findings: Iterable[Finding]) -> str:
    """Why a file's fixes were not written (they were verified together, so they stay together)."""
    findings = list(findings)
    bad = [f for f in findings if f.fix is not None and (f.fix.evidence is None or f.fix.evidence.verdict != "verified")]
    codes = ", ".join(f"{f.code} at {f'cell {f.cell} ' if f.cell is not None else ''}line {f.line} ({f.fix.evidence.verdict if f.fix.evidence else 'not verified'})" for f in bad)
    return f"{path}: held back {len(findings)} fix(es), not written: {codes or 'nothing was verified'}"


def write_fixed(outcome: FileOutcome, new_text: str | None = None) -> str | None:
    """Write the fixed text (or `new_text`) back atomically; an error line naming the file, else None."""
    result = outcome.result
    new_text = result.fixed_source if new_text is None else new_text
    try:
        write_atomic(result.path, new_text.encode(outcome.encoding), expected_old=outcome.original_bytes)
    except (WriteError, UnicodeEncodeError) as exc:
        return f"{result.path}: {exc}"
    return None
