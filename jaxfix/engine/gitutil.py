"""The few git questions batch migration asks: where the repository is, what changed since REF
(what a file's write policy asks of git is in `write_policy`)."""

from __future__ import annotations

import subprocess
from pathlib import Path


class GitError(Exception):
    """git could not answer; the message is one line."""


def _git(cwd: Path, *args: str) -> str:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise GitError(f"cannot run git: {exc}") from None
    if proc.returncode != 0:
        raise GitError(proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"git {args[0]} failed")
    return proc.stdout


def repo_root(path: Path) -> Path | None:
    folder = path if path.is_dir() else path.parent
    try:
        return Path(_git(folder, "rev-parse", "--show-toplevel").strip())
    except GitError:
        return None


def changed_since(ref: str, cwd: Path) -> set[Path]:
    """Files changed between REF and the working tree, plus untracked files (resolved paths)."""
    root = repo_root(cwd)
    if root is None:
        raise GitError(f"{cwd} is not inside a git repository")
    names = _git(root, "diff", "--name-only", ref, "--").splitlines()
    names += _git(root, "ls-files", "--others", "--exclude-standard").splitlines()
    return {(root / name).resolve() for name in names if name}
