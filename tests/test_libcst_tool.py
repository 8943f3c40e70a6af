"""Every rule also runs as a libcst codemod (`python -m libcst.tool codemod`), with the same result
as `jaxfix fix`, through the repository's .libcst.codemod.yaml."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jaxfix.engine import analyze, registry
from jaxfix.engine.config import Config

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "fixtures" / "jit_placement"


def _command_names():
    for rule in registry.all_rules():
        module = rule.__module__.split(".", 1)[1]
        yield f"{module}.{rule.__name__.removesuffix('Rule')}Command"


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_libcst_tool_runs_a_rule_like_jaxfix_fix(tmp_path, jobs):
    source = (EXAMPLE / "lambda_in_loop.in.py").read_text()
    target = tmp_path / "code.py"
    target.write_text(source)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "libcst.tool", "codemod", f"--jobs={jobs}", "jit_placement.JitPlacementCommand", str(target)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300,
    )
    assert "Transformed 1 files successfully" in proc.stderr, proc.stderr
    expected = analyze(source, str(target), Config(select=("JAX2",)), fix=True).fixed_source
    assert target.read_text() == expected


def test_every_rule_has_its_command():
    import importlib

    for dotted in _command_names():
        module, name = dotted.rsplit(".", 1)
        command = getattr(importlib.import_module(f"codemods.{module}"), name)
        assert command.__name__ == name and command.DESCRIPTION
