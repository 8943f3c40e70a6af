"""The split between the quick set and the long set (tests/conftest.py, tests/long_support.py).

The selection itself runs for real: pytest in a subprocess, on a temporary project holding copies
of this suite's conftest.py and long_support.py and a small test module.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from long_support import quick_and_long

HERE = Path(__file__).resolve().parent

MODULE = '''
import pytest
from long_support import quick_and_long


def test_quick():
    pass


@pytest.mark.long
def test_long():
    pass


@pytest.mark.parametrize("case", quick_and_long(["a1", "a2", "b1", "b2", "b3"], group=lambda c: c[0]))
def test_sweep(case):
    pass
'''


def _marks(params) -> list[bool]:
    return [any(m.name == "long" for m in p.marks) for p in params]


def test_the_first_cases_of_each_group_stay_quick():
    cases = ["a1", "a2", "a3", "b1", "c1", "c2"]
    assert _marks(quick_and_long(cases, group=lambda c: c[0])) == [False, True, True, False, False, True]
    assert _marks(quick_and_long(cases, group=lambda c: c[0], keep=2)) == [False, False, True, False, False, False]
    assert _marks(quick_and_long(cases)) == [False, True, True, True, True, True]
    # only an eligible case is quick: the first of its group that is
    assert _marks(quick_and_long(cases, group=lambda c: c[0], eligible=lambda c: c != "a1")) == [
        True, False, True, False, False, True,
    ]
    assert [p.values for p in quick_and_long(cases)] == [(c,) for c in cases]


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("split")
    shutil.copy(HERE / "conftest.py", root / "conftest.py")
    shutil.copy(HERE / "long_support.py", root / "long_support.py")
    (root / "test_m.py").write_text(MODULE)
    (root / "pytest.ini").write_text("[pytest]\nmarkers =\n    long: the long set\n")
    return root


def _run(project: Path, *args: str) -> tuple[set[str], str]:
    # Only the plugin a run names (xdist) is loaded: the others cost a second per start.
    env = {**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rA", *args],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    passed = {line.split("::", 1)[1] for line in proc.stdout.splitlines() if line.startswith("PASSED ")}
    return passed, proc.stdout


def test_the_default_run_leaves_the_long_tests_out_and_says_how_many(project):
    passed, out = _run(project, "-q")
    assert passed == {"test_quick", "test_sweep[a1]", "test_sweep[b1]"}
    assert "4 tests marked `long` were left out; add --long" in out


def test_the_count_comes_back_from_xdist_workers(project):
    passed, out = _run(project, "-q", "-p", "xdist", "-n", "2")
    assert passed == {"test_quick", "test_sweep[a1]", "test_sweep[b1]"}
    assert "4 tests marked `long` were left out" in out


def test_long_runs_both_sets_and_an_explicit_mark_expression_decides_alone(project):
    everything, out = _run(project, "-q", "--long")
    assert len(everything) == 7 and "left out" not in out
    only_long, out = _run(project, "-q", "-m", "long")
    assert only_long == {"test_long", "test_sweep[a2]", "test_sweep[b2]", "test_sweep[b3]"}
    assert "left out" not in out


def test_a_long_test_named_by_its_node_id_runs(project):
    passed, _ = _run(project, "-q", "test_m.py::test_long", "test_m.py::test_sweep")
    assert passed == {"test_long", "test_sweep[a1]", "test_sweep[a2]", "test_sweep[b1]", "test_sweep[b2]", "test_sweep[b3]"}
