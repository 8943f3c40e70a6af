"""A check that prints only what the fixes are builds no edits (`RuleContext.rewrite`, `Fix.built`):
it must print exactly what a check that builds them prints (one finding, one fix: the same title,
safety and applicability), on every golden fixture and every real-world case."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixture_cases import discover_cases

from jaxfix.engine import analyze
from jaxfix.engine.config import Config
from jaxfix.engine.notebook import analyze_notebook
from jaxfix.report import text

ROOT = Path(__file__).resolve().parent.parent
FILES = sorted(
    {case.input for case in discover_cases()} | set((ROOT / "benchmarks" / "realworld" / "cases").rglob("*.py"))
)


def _printed(findings) -> list[tuple]:
    """What a text check shows of each finding, with `--show-fixes`."""
    return [(f.sort_key(), f.preview, text.format_finding(f), text.fix_line(f)) for f in findings]


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_check_without_edits_prints_what_a_check_with_them_prints(path):
    source = path.read_text(encoding="utf-8")
    config = Config(preview=True, select=("ALL",))
    built = analyze(source, str(path), config)
    titled = analyze(source, str(path), config, edits=False)
    assert titled.error == built.error
    assert _printed(titled.findings) == _printed(built.findings)
    # what the unbuilt fixes' applicability rests on: a fix a rule decides to build changes the text
    for finding in built.findings:
        if finding.fix is not None and finding.fix.safety.value != "manual":
            assert finding.fix.edits, f"{finding.code} at {finding.line}: a fix with no edits"
    assert all(f.fix is None or f.fix.built for f in built.findings)


@pytest.mark.parametrize("path", sorted((ROOT / "tests" / "data" / "notebooks").glob("*.ipynb")), ids=lambda p: p.name)
def test_a_notebook_checked_without_edits_prints_the_same(path):
    source = path.read_text(encoding="utf-8")
    config = Config(preview=True, select=("ALL",))
    built = analyze_notebook(source, str(path), config)
    titled = analyze_notebook(source, str(path), config, edits=False)
    assert built.findings and _printed(titled.findings) == _printed(built.findings)
