"""`fix --write` in a git repository (issue #33, a newcomer's report): which files are written,
and what a refused one is told, through the real command line (`python -m jaxfix`) on a real
repository. A file is written when git holds its text, committed or staged (the fix is then its
only unstaged change); an untracked file and one with unstaged edits are refused, each with its
own reason and the way out."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from test_cli import JIT_IN_LOOP

FIXED = "_run_lambda_jit"  # the hoisted name the JAX201 fix gives the lambda
ROOT = Path(__file__).resolve().parents[1]


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def jaxfix(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "jaxfix", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "t@example.com")
    git(tmp_path, "config", "user.name", "t")
    for name in ("committed.py", "edited.py", "old_name.py"):
        (tmp_path / name).write_text(JIT_IN_LOOP)
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "init")
    (tmp_path / "edited.py").write_text(JIT_IN_LOOP + "\n# my own edit, not staged\n")
    (tmp_path / "untracked.py").write_text(JIT_IN_LOOP)  # written, never committed
    (tmp_path / "staged.py").write_text(JIT_IN_LOOP)
    git(tmp_path, "add", "staged.py")
    git(tmp_path, "mv", "old_name.py", "renamed.py")  # `R  renamed.py\0old_name.py` in `status -z`
    return tmp_path


def test_untracked_and_unstaged_files_are_refused_each_with_its_reason(tmp_path):
    root = repo(tmp_path)
    run = jaxfix(root, "fix", "--write", "--no-cache", "-j", "1", ".")
    assert run.returncode == 2, run.stderr
    lines = run.stderr.splitlines()
    assert "error: untracked.py: is not tracked by git, so nothing could show or undo the fix; not written " \
        "(`git add` it first, or use --allow-dirty)" in lines
    assert "error: edited.py: has changes not staged for commit; not written (`git add` or commit them " \
        "first, or use --allow-dirty)" in lines
    assert sum("not written" in line for line in lines) == 2
    assert lines[-1] == "Fixed 3 problems in 3 files."  # the summary closes the output
    for name in ("committed.py", "staged.py", "renamed.py"):
        assert FIXED in (root / name).read_text(), name
    assert (root / "untracked.py").read_text() == JIT_IN_LOOP
    assert (root / "edited.py").read_text() == JIT_IN_LOOP + "\n# my own edit, not staged\n"
    # the staged file's fix is its only unstaged change: `git diff` shows it alone, and the index
    # still holds the text the user staged
    diff = git(root, "diff", "--", "staged.py")
    assert f"+        total = total + {FIXED}(x)" in diff.splitlines()
    assert git(root, "show", ":staged.py") == JIT_IN_LOOP


def test_git_add_is_the_way_out_for_an_untracked_file(tmp_path):
    root = repo(tmp_path)
    git(root, "add", "untracked.py")
    run = jaxfix(root, "fix", "--write", "--no-cache", "-j", "1", "untracked.py")
    assert run.returncode == 0, run.stderr
    assert FIXED in (root / "untracked.py").read_text()
    git(root, "restore", "untracked.py")  # and `git restore` takes the fix back
    assert (root / "untracked.py").read_text() == JIT_IN_LOOP


def test_allow_dirty_writes_both(tmp_path):
    root = repo(tmp_path)
    run = jaxfix(root, "fix", "--write", "--allow-dirty", "--no-cache", "-j", "1", "untracked.py", "edited.py")
    assert run.returncode == 0, run.stderr
    assert FIXED in (root / "untracked.py").read_text()
    assert (root / "edited.py").read_text().endswith("# my own edit, not staged\n")
    assert FIXED in (root / "edited.py").read_text()


def test_outside_a_repository_every_file_is_written(tmp_path):
    (tmp_path / "m.py").write_text(JIT_IN_LOOP)
    run = jaxfix(tmp_path, "fix", "--write", "--no-cache", "m.py")
    assert run.returncode == 0, run.stderr
    assert FIXED in (tmp_path / "m.py").read_text()
