"""Which fixed files may be written, and writing them: the policy every front end shares.

- A file with uncommitted changes is refused unless the user allows it: the user's own edits and
  the fix would be mixed in one change that `git checkout` can no longer take apart.
- With verification, a fix is written only when it was verified. Each rule's fixes in a file are
  verified on their own (`jaxfix.verify.apart`); where some are not verified, the file is written
  with only the verified ones, when they apply without the others, else the whole file is held back.
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


def held_back(path: str, findings: Iterable[Finding], written: bool = False) -> str:
    """Which of a file's fixes were not written, each named with its verdict. `written`: the
    verified ones were written without them; else every fix is held back, the verified ones too
    (they do not apply without a held-back one), and each is named."""
    applied = [f for f in findings if f.fix is not None]

    def verdict(f: Finding) -> str:
        return f.fix.evidence.verdict if f.fix.evidence else "not verified"

    def at(f: Finding) -> str:
        return f"{f.code} at {f'cell {f.cell} ' if f.cell is not None else ''}line {f.line}"

    bad = [f for f in applied if verdict(f) != "verified"]
    good = [f for f in applied if verdict(f) == "verified"]
    named = ", ".join(f"{at(f)} ({verdict(f)})" for f in bad) or "nothing was verified"
    if written:
        return (f"{path}: held back {len(bad)} fix(es), not written: {named}; "
                f"wrote the {len(good)} verified: {', '.join(at(f) for f in good)}")
    if good:
        named += ", " + ", ".join(f"{at(f)} (verified, but it does not apply without a fix held back)" for f in good)
    return f"{path}: held back {len(applied)} fix(es), not written: {named}"


def write_fixed(outcome: FileOutcome, new_text: str | None = None) -> str | None:
    """Write the fixed text (or `new_text`) back atomically; an error line naming the file, else None."""
    result = outcome.result
    new_text = result.fixed_source if new_text is None else new_text
    try:
        write_atomic(result.path, new_text.encode(outcome.encoding), expected_old=outcome.original_bytes)
    except (WriteError, UnicodeEncodeError) as exc:
        return f"{result.path}: {exc}"
    return None
