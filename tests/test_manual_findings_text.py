"""A finding whose fix is manual says so in `check`'s text once (issue #33, a newcomer's report):
a JAX201 message ending "...; hoist it (...)" read like a fix though none is offered, and only
`--show-fixes` or `explain` said "manual". Ruff shows no marker for a finding it cannot fix; the
one word "(manual)" closes such a line, where the message does not already say "manual". Through
the real command line (`python -m jaxfix`) on real files."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

FRESH_CLOSURE = (ROOT / "fixtures" / "jit_placement" / "fresh_closure_manual.in.py").read_text()
FLOAT_OF_TRACED = """\
import jax


@jax.jit
def scale(x):
    return x * float(x.sum())
"""


def jaxfix(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jaxfix", *args], cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, check=False,
    )


def test_a_manual_fix_that_reads_like_one_says_manual(tmp_path):
    (tmp_path / "blocks.py").write_text(FRESH_CLOSURE)
    run = jaxfix(tmp_path, "check", "--no-cache", "blocks.py")
    [line] = run.stdout.splitlines()
    assert line.startswith("blocks.py:13:13: JAX201 `jax.jit(...)` of a fresh decorated nested def inside a loop")
    assert "; hoist it (" in line and line.endswith(") (manual)")
    assert "[*]" not in line and "[-]" not in line
    shown = jaxfix(tmp_path, "check", "--no-cache", "--show-fixes", "blocks.py").stdout.splitlines()
    assert shown[1].startswith("    fix (manual): Hoist by hand: ")
    # and indeed nothing is rewritten
    fixed = jaxfix(tmp_path, "fix", "--no-cache", "blocks.py")
    assert fixed.returncode == 1 and "@@" not in fixed.stdout and "(manual)" in fixed.stdout
    assert fixed.stderr.strip().splitlines()[-1] == "Would fix 0 problems in 0 files; 1 remaining."


def test_a_message_that_says_manual_is_left_as_it_is(tmp_path):
    (tmp_path / "m.py").write_text(FLOAT_OF_TRACED)
    [line] = jaxfix(tmp_path, "check", "--no-cache", "m.py").stdout.splitlines()
    assert "needs a concrete value; manual: keep it an array" in line
    assert line.lower().count("manual") == 1
