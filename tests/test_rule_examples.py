"""Every rule's VALID and INVALID examples (kept on the rule, as Fixit does) run as tests.

A VALID example gives no finding of the rule's code. An INVALID one gives at least one, and
`jaxfix fix --unsafe-fixes` restricted to that code turns it into the stated `fixed` text (or
leaves it unchanged when the rule offers no automatic fix there); fixing that text again
changes nothing. A rule about other rules' findings (`sees_findings`, JAX001) judges only the
codes selected beside it, and a `# noqa` naming its own code silences its report: its examples
run with every code selected.
"""

from __future__ import annotations

import pytest

from jaxfix.engine import analyze, registry
from jaxfix.engine.config import Config


def _cases(kind: str):
    for rule in registry.all_rules():
        code = rule.codes[0].code
        select = ("ALL",) if rule.sees_findings else (code,)
        for number, example in enumerate(getattr(rule, kind), 1):
            yield pytest.param(code, select, example, id=f"{code}-{number}")


def _run(select: tuple[str, ...], text: str):
    result = analyze(text, "example.py", Config(preview=True, select=select, unsafe_fixes=True), fix=True)
    assert result.error is None, result.error
    return result


def test_every_rule_has_valid_and_invalid_examples():
    missing = [
        rule.codes[0].code for rule in registry.all_rules() if not rule.valid or not rule.invalid
    ]
    assert not missing, f"rules without VALID and INVALID examples: {missing}"


@pytest.mark.parametrize(("code", "select", "example"), list(_cases("valid")))
def test_valid_example_is_not_reported(code, select, example):
    result = _run(select, example.code)
    assert [f for f in result.findings if f.code == code] == []


@pytest.mark.parametrize(("code", "select", "example"), list(_cases("invalid")))
def test_invalid_example_is_reported_and_fixed_as_stated(code, select, example):
    result = _run(select, example.code)
    assert any(f.code == code for f in result.findings), f"{code} not reported on its own example"
    fixed = result.fixed_source if result.fixed_source is not None else example.code
    expected = example.fixed if example.fixed is not None else example.code
    assert fixed == expected
    assert _run(select, fixed).fixed_source is None, "fixing the fixed example changed it again"
