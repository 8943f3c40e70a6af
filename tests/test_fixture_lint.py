"""Generated code fits the file's linters: a fixture whose input passes Ruff's F401, I001, E1 and
W checks keeps passing them after `jaxfix fix --unsafe-fixes`.

Every input and output is written to one temporary folder and checked by one `ruff` run (one
process for all cases); each case then reads its own result. An input that already fails is
not asked to come out clean (the fix does not clean up the user's own lint); its output must
only add no problem of its own.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections import Counter

import pytest
from fixture_cases import discover_cases

from jaxfix.engine import analyze
from jaxfix.engine.config import Config

SELECT = "F401,I001,E1,W"  # E1 (indentation) runs only with --preview in Ruff 0.x
POSITIVE = [c for c in discover_cases() if c.positive]


def _ruff() -> list[str]:
    exe = shutil.which("ruff")
    return [exe] if exe else [sys.executable, "-m", "ruff"]


@pytest.fixture(scope="module")
def lint(tmp_path_factory):
    """{case id: (input problems, output problems)} from one Ruff run over every file."""
    root = tmp_path_factory.mktemp("lint")
    names = {}
    for i, case in enumerate(POSITIVE):
        source = case.input.read_text(encoding="utf-8")
        result = analyze(source, str(case.input), Config(select=("ALL",), unsafe_fixes=True), fix=True)
        assert result.error is None, result.error
        # module names of their own: isort's first-party guess must not depend on the case name
        (root / f"case{i}_in.py").write_text(source, encoding="utf-8")
        (root / f"case{i}_out.py").write_text(result.fixed_source or source, encoding="utf-8")
        names[case.id] = (f"case{i}_in.py", f"case{i}_out.py")
    run = subprocess.run(
        [*_ruff(), "check", "--select", SELECT, "--no-cache", "--isolated", "--preview", "--output-format", "json", "."],
        cwd=root,
        check=False,
        capture_output=True,
        text=True,
    )
    assert run.returncode in (0, 1), run.stderr
    problems: dict[str, list[str]] = {}
    for item in json.loads(run.stdout or "[]"):
        name = item["filename"].rsplit("/", 1)[-1]
        problems.setdefault(name, []).append(f"{item['location']['row']}: {item['code']} {item['message']}")
    return {cid: (problems.get(i, []), problems.get(o, [])) for cid, (i, o) in names.items()}


@pytest.mark.parametrize("case", POSITIVE, ids=lambda c: c.id)
def test_fixed_output_is_as_lint_clean_as_its_input(case, lint):
    before, after = lint[case.id]
    if not before:
        assert after == [], "\n".join(after)
    else:  # same problems at most, wherever they moved
        new = Counter(_kind(p) for p in after) - Counter(_kind(p) for p in before)
        assert not new, f"the fix added {sorted(new)}"


def _kind(problem: str) -> str:
    return problem.split(": ", 1)[1]


def test_most_fixture_inputs_are_lint_clean(lint):
    """The check above means something only while most inputs are in scope."""
    clean = sum(1 for before, _ in lint.values() if not before)
    assert clean >= 0.8 * len(lint), f"only {clean} of {len(lint)} fixture inputs pass {SELECT}"
