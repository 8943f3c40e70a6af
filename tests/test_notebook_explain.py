"""`jaxfix explain nb.ipynb` (issue #32 item 5): the notebook's cells run in order under the
monitor (a real child process, real jax on CPU), and recompiles are joined to findings and
reported at `cell N:line`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import nbformat

from jaxfix.explain import explain as run_explain
from jaxfix.explain.render import render_json, render_text

IMPORTS = "from functools import partial\n\nimport jax\nimport jax.numpy as jnp"
LOSS = "def loss(w, x):\n    return jnp.sum((w * x) ** 2)"
# a jit of a fresh partial per step (JAX201) in its own cell, after a magic and a timing line
LOOP = (
    "%matplotlib inline\nw = jnp.ones(3)\nfor step in range(3):\n"
    "    g = jax.jit(partial(loss, x=jnp.ones(3)))(w)\n    w = w - 0.1 * g\n"
    "%timeit -n 1 -r 1 loss(w, w)"
)


def notebook(path: Path, *cells: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# Notes")] + [nbformat.v4.new_code_cell(c) for c in cells]
    nbformat.write(nb, path)
    return path


def test_explain_runs_the_cells_and_names_cells(tmp_path):
    notebook(tmp_path / "nb.ipynb", IMPORTS + "\n\n" + LOSS, LOOP)
    result = run_explain(["nb.ipynb"], cwd=str(tmp_path))
    assert result.run.returncode == 0, result.run.problem
    assert result.exit_code == 1  # a function of the user's recompiled
    report = json.loads(render_json(result.run, result.collected, result.causes, cwd=str(tmp_path)))
    [loss] = [f for f in report["functions"] if f["name"] == "loss"]
    assert (loss["path"], loss["cell"], loss["line"], loss["traces"], loss["compiles"]) == ("nb.ipynb", 2, 6, 3, 3)
    [cause] = loss["recompiles"]
    assert (cause["cell"], cause["line"], cause["kind"], cause["count"]) == (3, 4, "redefined", 2)
    assert [(f["code"], f["cell"], f["line"], f["column"]) for f in cause["findings"]] == [("JAX201", 3, 4, 9)]
    text = render_text(result.run, result.collected, result.causes, cwd=str(tmp_path))
    assert "loss (nb.ipynb:cell 2:6): traced 3 times, compiled 3 times" in text
    assert "2× at nb.ipynb:cell 3:4:8 in <module>" in text
    assert "-> JAX201 jit-in-loop (fix: safe) at nb.ipynb:cell 3:4:9" in text


def test_explain_reports_a_failing_cell_by_cell_and_line(tmp_path):
    notebook(tmp_path / "bad.ipynb", IMPORTS, "x = jnp.ones(2)\nraise ValueError('stop here')")
    run = subprocess.run(
        [sys.executable, "-m", "jaxfix", "explain", "bad.ipynb"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 2  # the command failed
    assert f'File "{(tmp_path / "bad.ipynb").resolve()}", cell 3, line 2' in run.stderr
    assert "ValueError: stop here" in run.stderr


def test_python_scripts_are_run_as_before(tmp_path):
    (tmp_path / "s.py").write_text("print('ran')\n")
    result = run_explain([sys.executable, "s.py"], cwd=str(tmp_path))
    assert result.run.returncode == 0 and result.run.argv == [sys.executable, "s.py"]
