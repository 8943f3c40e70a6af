"""`check` without preview says how many preview findings it left out, in one line after the
summary (issue #33: nothing told a newcomer that 6 of 20 planted bugs were waiting behind
`--preview`). Counted where the rules computed them anyway (`fixing.settle` drops them): a rule
that is preview as a whole does not run without preview and is not counted. Through the real
command line (`python -m jaxfix`) on real files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# JAX201 in a loop over values written out in a list: preview (docs/preview.md)
SWEEP = """\
import jax
import jax.numpy as jnp

x = jnp.ones(3)
for s in [0.5, 1.0, 2.0]:
    f = jax.jit(lambda v: v * s)
    print(f(x))
"""
LINE = "1 hidden finding can be shown with the `--preview` option (docs/preview.md)."


def check(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jaxfix", "check", *args], cwd=cwd, env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, check=False,
    )


def test_the_left_out_preview_findings_are_counted_in_one_line(tmp_path):
    (tmp_path / "sweep.py").write_text(SWEEP)
    default = check(tmp_path, "--no-cache", "sweep.py")
    assert default.returncode == 0 and default.stdout == ""
    assert default.stderr.splitlines() == ["All checks passed!", LINE]
    shown = check(tmp_path, "--no-cache", "--preview", "sweep.py")
    assert shown.returncode == 1 and "sweep.py:6:9: JAX201" in shown.stdout
    assert "hidden finding" not in shown.stderr
    # the result cache keeps the count: a run answered from it says the same
    assert check(tmp_path, "sweep.py").stderr.splitlines()[-1] == LINE
    assert check(tmp_path, "sweep.py").stderr.splitlines()[-1] == LINE
    assert check(tmp_path, "-q", "--no-cache", "sweep.py").stderr == ""


def test_suppressed_and_preview_only_findings_are_not_counted(tmp_path):
    (tmp_path / "sweep.py").write_text(SWEEP.replace("v * s)", "v * s)  # noqa: JAX201"))
    # JAX404 is preview as a whole: it does not run without preview, so nothing of it is counted
    (tmp_path / "log.py").write_text(
        "import jax\n\nlosses = []\n\n\n@jax.jit\ndef step(x):\n    losses.append(x)\n    return x * 2\n"
    )
    default = check(tmp_path, "--no-cache", ".")
    assert default.returncode == 0 and default.stderr.splitlines() == ["All checks passed!"]
    assert "log.py:8:5: JAX404" in check(tmp_path, "--no-cache", "--preview", ".").stdout


def test_a_notebook_counts_too(tmp_path):
    sources = ["import jax\nimport jax.numpy as jnp\nx = jnp.ones(3)\n", SWEEP.split("\n\n", 1)[1]]
    cells = [
        {"id": f"c{i}", "cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [], "source": text}
        for i, text in enumerate(sources)
    ]
    notebook = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (tmp_path / "nb.ipynb").write_text(json.dumps(notebook))
    assert check(tmp_path, "--no-cache", "nb.ipynb").stderr.splitlines() == ["All checks passed!", LINE]


def test_the_editor_analysis_counts_as_check_does():
    """The language server's incremental analysis returns what `analyze` does, the count included."""
    from jaxfix.engine import analyze
    from jaxfix.engine.config import Config
    from jaxfix.engine.incremental import IncrementalAnalyzer

    assert analyze(SWEEP, "m.py", Config()).hidden_preview == 1
    assert IncrementalAnalyzer().analyze(SWEEP, "m.py", Config()).hidden_preview == 1
    assert analyze(SWEEP, "m.py", Config(preview=True)).hidden_preview == 0
