"""Every golden fixture, checked as text: expected output, idempotence, expected findings.

Behaviour (old vs new, run and compared) is checked by the verification tests over
the same cases. Set JAXFIX_UPDATE_GOLDEN=1 to rewrite .out.py and .findings.txt
after an intended change, then review the diff.
"""

from __future__ import annotations

import ast
import os

import pytest
from fixture_cases import discover_cases

from jaxfix.engine import analyze
from jaxfix.engine.config import Config

CASES = discover_cases()
UPDATE = os.environ.get("JAXFIX_UPDATE_GOLDEN") == "1"


def _config(case) -> Config:
    config = Config(preview=True, select=("ALL",), unsafe_fixes=case.unsafe)
    if case.family == "pytree_cache":
        # its goldens: the opt-in field style, every pytree reported (fixtures/pytree_cache/README.md)
        config = config.with_options("pytree-cache", **{"cache-style": "field", "unproven-pytrees": True})
    return config


def _findings_text(findings) -> str:
    rows = [
        f"{f.line}:{f.column} {f.code} {f.fix.safety.value if f.fix is not None else 'none'}" for f in findings
    ]
    return "".join(row + "\n" for row in rows)


def test_fixture_cases_exist():
    assert CASES, "no fixture cases found under fixtures/"


@pytest.mark.parametrize("case", [c for c in CASES if c.positive], ids=lambda c: c.id)
def test_positive_case_is_fixed_as_expected(case):
    source = case.input.read_text(encoding="utf-8")
    result = analyze(source, str(case.input), _config(case), fix=True)
    assert result.error is None, result.error
    assert result.findings, "a positive case must produce findings"
    fixed = result.fixed_source if result.fixed_source is not None else source
    if UPDATE:
        case.expected.write_text(fixed, encoding="utf-8")
        case.findings_file.write_text(_findings_text(result.findings), encoding="utf-8")
    assert fixed == case.expected.read_text(encoding="utf-8")
    assert _findings_text(result.findings) == case.findings_file.read_text(encoding="utf-8")
    ast.parse(fixed)


@pytest.mark.parametrize("case", [c for c in CASES if c.positive], ids=lambda c: c.id)
def test_fixing_twice_changes_nothing(case):
    expected = case.expected.read_text(encoding="utf-8")
    again = analyze(expected, str(case.expected), _config(case), fix=True)
    assert again.error is None, again.error
    assert again.fixed_source is None, "fixing the fixed output changed it again"
    assert all(f.fix is None or not f.fix.applicable for f in again.findings)


@pytest.mark.parametrize("case", [c for c in CASES if c.positive], ids=lambda c: c.id)
def test_positive_case_has_a_driver(case):
    assert case.driver is not None, f"{case.id} has no .drive.py for differential execution"


@pytest.mark.parametrize("case", [c for c in CASES if not c.positive], ids=lambda c: c.id)
def test_negative_case_is_not_flagged(case):
    source = case.input.read_text(encoding="utf-8")
    result = analyze(source, str(case.input), Config(preview=True, select=("ALL",)), fix=True)
    assert result.error is None, result.error
    assert result.findings == [], [f"{f.line}:{f.column} {f.code} {f.message}" for f in result.findings]
    assert result.fixed_source is None
