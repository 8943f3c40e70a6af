"""The line that closes `jaxfix check` (issue #33, a newcomer's report): the fixes in Ruff's words,
"[*] N fixable with ... (M hidden fixes can be enabled with the `--unsafe-fixes` option)" and
"No fixes available (...)" where nothing is fixable without it (it said "[-] 2 more" after no
fixable one). Through the real command line (`python -m jaxfix`) on real files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

UNROLLED = """\
import jax
import jax.numpy as jnp


@jax.jit
def augment(x):
{print}    for k in range(400):
        x = x + jnp.sin(x) * 0.001
    return x


@jax.jit
def scale(x):
    return x * float(x.sum())
"""
UNSAFE_AND_MANUAL = UNROLLED.format(print="")  # JAX502 [-] (unsafe fix), JAX304 (manual)
SAFE_TOO = UNROLLED.format(print='    print("x is", x)\n')  # and JAX401 [*]


def summary(cwd: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-m", "jaxfix", "check", "--no-cache", *args], cwd=cwd, env=env,
        capture_output=True, text=True, check=False,
    )
    assert run.returncode == 1, run.stderr
    return run.stderr.strip().splitlines()[-1]


def test_only_unsafe_fixes_say_no_fixes_available(tmp_path):
    (tmp_path / "m.py").write_text(UNSAFE_AND_MANUAL)
    assert summary(tmp_path, "m.py") == (
        "Found 2 problems. No fixes available (1 hidden fix can be enabled with the `--unsafe-fixes` option)."
    )


def test_safe_and_unsafe_fixes(tmp_path):
    (tmp_path / "m.py").write_text(SAFE_TOO)
    (tmp_path / "n.py").write_text(UNSAFE_AND_MANUAL)
    assert summary(tmp_path, ".") == (
        "Found 5 problems. [*] 1 fixable with `jaxfix check --fix` "
        "(2 hidden fixes can be enabled with the `--unsafe-fixes` option)."
    )


def test_enabled_unsafe_fixes_are_fixable_not_hidden(tmp_path):
    (tmp_path / "m.py").write_text(SAFE_TOO)
    assert summary(tmp_path, "--unsafe-fixes", "m.py") == "Found 3 problems. [*] 2 fixable with `jaxfix check --fix`."
    (tmp_path / "pyproject.toml").write_text("[tool.jaxfix]\nunsafe-fixes = true\n")
    assert summary(tmp_path, "m.py") == "Found 3 problems. [*] 2 fixable with `jaxfix check --fix`."
    assert summary(tmp_path, "--no-unsafe-fixes", "m.py") == (
        "Found 3 problems. [*] 1 fixable with `jaxfix check --fix` "
        "(1 hidden fix can be enabled with the `--unsafe-fixes` option)."
    )


def test_no_fix_at_all_says_nothing_of_fixes(tmp_path):
    (tmp_path / "m.py").write_text("import jax\n\n\n@jax.jit\ndef scale(x):\n    return x * float(x.sum())\n")
    assert summary(tmp_path, "m.py") == "Found 1 problem."
