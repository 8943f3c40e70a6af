"""The libcst commands of the old single `codemods/compile_cost.py` keep their names after the split
into one module per rule: `compile_cost.UnblockedTimingCommand` is the rule module's own command,
so `python -m libcst.tool codemod compile_cost.<Name>Command` and its worker processes (which
pickle the command by reference) work as before."""

from __future__ import annotations

import importlib
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from jaxfix.engine import analyze
from jaxfix.engine.config import Config

REPO = Path(__file__).resolve().parent.parent
OLD_NAMES = {
    "UnblockedTimingCommand": ("unblocked_timing", "JAX501"),
    "UnrolledLoopCommand": ("unrolled_python_loop_in_jit", "JAX502"),
    "LargeConstantCommand": ("large_captured_constant", "JAX503"),
}


@pytest.mark.parametrize("name", sorted(OLD_NAMES))
def test_old_command_name_is_the_rule_modules_command(name):
    module, code = OLD_NAMES[name]
    family = importlib.import_module("codemods.compile_cost")
    command = getattr(family, name)
    assert command is getattr(importlib.import_module(f"codemods.compile_cost.{module}"), name)
    assert command.DESCRIPTION.startswith(f"{code}: ")
    assert pickle.loads(pickle.dumps(command)) is command


def test_unknown_name_is_an_attribute_error():
    family = importlib.import_module("codemods.compile_cost")
    with pytest.raises(AttributeError):
        family.CompileCostCommand  # noqa: B018  (never existed)


def test_libcst_tool_runs_an_old_command_name_like_jaxfix_fix(tmp_path):
    source = (REPO / "fixtures" / "compile_cost" / "timing_basic.in.py").read_text(encoding="utf-8")
    target = tmp_path / "code.py"
    target.write_text(source, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-m", "libcst.tool", "codemod", "--jobs=2", "compile_cost.UnblockedTimingCommand", str(target)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=300, check=False,
    )
    assert "Transformed 1 files successfully" in proc.stderr, proc.stderr
    expected = analyze(source, str(target), Config(select=("JAX501",)), fix=True).fixed_source
    assert expected is not None and target.read_text(encoding="utf-8") == expected
