"""The pre-commit hooks, run for real with `pre-commit try-repo` on a temporary repository.

pre-commit builds jaxfix into its own environment from this checkout (one install,
shared by the three runs below), so this is the slowest test in the suite.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from test_cli import JIT_IN_LOOP

REPO = Path(__file__).resolve().parent.parent
PRE_COMMIT = shutil.which("pre-commit") or str(Path(sys.executable).parent / "pre-commit")


def run(cmd, cwd, env):
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
@pytest.mark.long  # pre-commit installs jaxfix into an environment of its own (over a minute)
def test_hooks_fail_on_bad_code_pass_after_fix_and_pass_with_no_python_files(tmp_path):
    if not Path(PRE_COMMIT).exists():
        pytest.fail("pre-commit is part of the test extra and must be installed")
    project = tmp_path / "project"
    project.mkdir()
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    (project / "README.txt").write_text("no python here\n")
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)

    # No Python files staged: the hook is skipped, which pre-commit counts as passing.
    nothing = run([PRE_COMMIT, "try-repo", str(REPO), "jaxfix-check"], project, env)
    assert nothing.returncode == 0, nothing.stdout + nothing.stderr

    (project / "train.py").write_text(JIT_IN_LOOP)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    failing = run([PRE_COMMIT, "try-repo", str(REPO), "jaxfix-check"], project, env)
    assert failing.returncode == 1, failing.stdout + failing.stderr
    assert "train.py:8:" in failing.stdout

    fixing = run([PRE_COMMIT, "try-repo", str(REPO), "jaxfix-fix"], project, env)
    assert fixing.returncode == 1 and "files were modified by this hook" in fixing.stdout, fixing.stdout
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    passing = run([PRE_COMMIT, "try-repo", str(REPO), "jaxfix-check"], project, env)
    assert passing.returncode == 0, passing.stdout + passing.stderr


@pytest.mark.slow
def test_local_hook_runs_the_installed_jaxfix(tmp_path):
    """The README's `repo: local` hook (jaxfix installed in the environment, as from a clone):
    it fails on a finding and passes once the file is fixed."""
    if not Path(PRE_COMMIT).exists():
        pytest.fail("pre-commit is part of the test extra and must be installed")
    project = tmp_path / "project"
    project.mkdir()
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "PATH": bin_dir + os.pathsep + os.environ["PATH"],
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    config = readme.split("Or as a local hook", 1)[1].split("```yaml\n", 1)[1].split("```", 1)[0]
    assert "repo: local" in config
    (project / ".pre-commit-config.yaml").write_text(config)
    (project / "m.py").write_text(JIT_IN_LOOP)
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    found = run([PRE_COMMIT, "run", "--all-files"], project, env)
    assert found.returncode == 1, found.stdout + found.stderr
    assert "JAX2" in found.stdout
    subprocess.run([str(Path(bin_dir) / "jaxfix"), "fix", "--write", "--allow-dirty", "-q", "m.py"], cwd=project, env=env)
    subprocess.run(["git", "add", "-A"], cwd=project, check=True)
    clean = run([PRE_COMMIT, "run", "--all-files"], project, env)
    assert clean.returncode == 0, clean.stdout + clean.stderr
