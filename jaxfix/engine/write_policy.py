"""Which fixed files may be written, and writing them: the policy every front end shares.

- In a git repository a file is written only when git holds what is in it now, committed or
  staged: the fix is then the file's only unstaged change, `git diff` shows it alone and
  `git restore FILE` takes it back. Refused unless the user allows it (`--allow-dirty`): a file
  with changes not staged for commit (the user's edits and the fix would be mixed in one change
  that git can no longer take apart), and an untracked file (git holds no copy of it: nothing
  would show the fix or take it back). Ruff has no such check; `cargo fix` has this one.
- With verification, a fix is written only when it was verified. Each rule's fixes in a file are
  verified on their own (`jaxfix.verify.apart`); where some are not verified, the file is written
  with only the verified ones, when they apply without the others, else the whole file is held back.
- Writing is atomic, in the file's own encoding, and never over a file that changed since it was
  read (`writer.write_atomic`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from jaxfix.engine.gitutil import GitError, _git, repo_root
from jaxfix.engine.runner import FileOutcome
from jaxfix.engine.writer import WriteError, write_atomic
from jaxfix.model import Finding


def refuse_dirty(changed: list[FileOutcome]) -> tuple[list[FileOutcome], list[str]]:
    """The files that may be written, and one error line per file refused (`unwritable`)."""
    try:
        refused = unwritable([Path(o.result.path) for o in changed])
    except GitError as exc:
        return changed, [f"cannot ask git which files are dirty: {exc}"]
    why = {o.result.path: refused.get(Path(o.result.path).resolve()) for o in changed}
    errors = [f"{path}: {WHY[reason]}" for path, reason in why.items() if reason is not None]
    return [o for o in changed if why[o.result.path] is None], errors


# Why a file is not written, as the error line says it.
WHY = {
    "untracked": "is not tracked by git, so nothing could show or undo the fix; not written "
    "(`git add` it first, or use --allow-dirty)",
    "unstaged": "has changes not staged for commit; not written (`git add` or commit them first, or use --allow-dirty)",
}


def unwritable(paths: list[Path]) -> dict[Path, str]:
    """Those of `paths` inside a git repository that a fix may not be written into (resolved
    path -> "untracked" or "unstaged"): the ones whose text git does not hold, committed or
    staged. A staged file whose working copy matches the index is writable."""
    refused: dict[Path, str] = {}
    by_root: dict[Path, list[Path]] = {}
    for path in paths:
        root = repo_root(path.resolve())
        if root is not None:
            by_root.setdefault(root, []).append(path.resolve())
    for root, files in by_root.items():
        out = _git(root, "status", "--porcelain", "-z", "--untracked-files=all", "--", *map(str, files))
        entries = iter(out.split("\0"))
        for entry in entries:
            if len(entry) < 4:
                continue
            staged, unstaged, name = entry[0], entry[1], entry[3:]
            if staged in "RC":
                next(entries, None)  # a rename or copy: the entry after it is the old name
            if entry.startswith("??"):
                refused[(root / name).resolve()] = "untracked"
            elif unstaged != " ":  # the working copy differs from the index (unmerged entries too)
                refused[(root / name).resolve()] = "unstaged"
    return refused


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
