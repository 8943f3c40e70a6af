"""Generated JAX-shaped programs (tests/jax_programs.py) through every rule, alone and together.

Properties (fuzz_support.check_properties): no internal error, every fixed output parses,
fixing is idempotent, text outside the fixed lines is byte-identical (CRLF kept), and
analyze() equals a checked replay of its fix loop. Plus: `check -j 1` and `-j 2` agree on a
folder of generated files, and a sample of runnable programs behaves the same before
(eager) and after the safe fixes (under jit). Example counts: see conftest.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import LONG, examples
from fuzz_support import check_properties
from hypothesis import given, note
from hypothesis import strategies as st

from jaxfix.engine import registry
from jaxfix.engine.config import Config

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from jax_programs import jax_programs  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
RULES = registry.all_rules()


def _env():
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


@examples(fast=20, long=3000)
@given(program=jax_programs(), unsafe=st.booleans())
def test_all_rules_together(program, unsafe):
    checked = check_properties(program.source, Config(unsafe_fixes=unsafe))
    note(f"{checked}")
    assert not checked.refused, "a generated program is valid Python and must be analysed"


@pytest.mark.parametrize("rule", RULES, ids=[r.name for r in RULES])
@examples(fast=4, long=800)
@given(program=jax_programs())
def test_each_rule_alone(rule, program):
    config = Config(select=tuple(code.code for code in rule.codes), unsafe_fixes=True)
    checked = check_properties(program.source, config)
    assert not checked.refused


def _check_json(folder: Path, jobs: int) -> list:
    proc = subprocess.run(
        [sys.executable, "-m", "jaxfix", "check", str(folder), "--no-cache", "-q", "-j", str(jobs), "--output-format", "json"],
        capture_output=True, text=True, env=_env(), timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout)


@examples(fast=1, long=8)
@given(programs=st.lists(jax_programs(), min_size=10, max_size=14))
def test_check_is_the_same_with_one_or_two_workers(programs, tmp_path_factory):
    folder = tmp_path_factory.mktemp("gen")
    for i, program in enumerate(programs):
        (folder / f"m{i:02}.py").write_bytes(program.source.encode())
    serial = _check_json(folder, 1)
    parallel = _check_json(folder, 2)
    assert serial == parallel
    assert len(programs) >= 8  # enough files for the pool to be used


def _behaviour(programs, folder: Path) -> list[dict]:
    from jaxfix.engine import analyze

    count = 0
    for i, program in enumerate(programs):
        result = analyze(program.source, f"orig_{i}.py", Config(), fix=True)
        if result.fixed_source is None:
            continue
        (folder / f"orig_{i:03}.py").write_bytes(program.source.encode())
        (folder / f"fixed_{i:03}.py").write_bytes(result.fixed_source.encode())
        count += 1
    if not count:
        return []
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("behaviour_child.py")), str(folder)],
        capture_output=True, text=True, env={**_env(), "JAX_PLATFORMS": "cpu"}, timeout=120 + 10 * count,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    verdicts = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert len(verdicts) == count
    return verdicts


@examples(fast=3, long=15)
@given(programs=st.lists(jax_programs(runnable_only=True), min_size=4, max_size=6))
def test_runnable_programs_behave_the_same_after_safe_fixes(programs, tmp_path_factory):
    folder = tmp_path_factory.mktemp("run")
    verdicts = _behaviour(programs, folder)
    bad = [v for v in verdicts if v["verdict"] in ("DIFFERENT", "FIX-BREAKS-IT", "HARNESS-ERROR")]
    for v in bad:
        n = v["n"]
        note(f"{v}\n--- original\n{(folder / f'orig_{n}.py').read_text()}\n--- fixed\n{(folder / f'fixed_{n}.py').read_text()}")
    assert not bad, bad


def test_the_behaviour_check_can_fail(tmp_path):
    """The harness itself: a 'fixed' program that computes something else is reported."""
    good = "import jax.numpy as jnp\n\n\ndef main(x, y):\n    return [jnp.sin(x) + y]\n"
    (tmp_path / "orig_000.py").write_text(good)
    (tmp_path / "fixed_000.py").write_text(good.replace("+ y", "- y"))
    (tmp_path / "orig_001.py").write_text(good)
    (tmp_path / "fixed_001.py").write_text(good)
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).with_name("behaviour_child.py")), str(tmp_path)],
        capture_output=True, text=True, env={**_env(), "JAX_PLATFORMS": "cpu"}, timeout=120,
    )
    verdicts = {json.loads(line)["n"]: json.loads(line)["verdict"] for line in proc.stdout.splitlines()}
    assert verdicts == {"000": "DIFFERENT", "001": "same"}
