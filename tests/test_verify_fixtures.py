"""Every fixture case with a driver, verified by differential execution through `jaxfix.verify`.

Two kinds of case are discovered, never listed:

- the rules' golden cases, `fixtures/<family>/<case>.in.py` + `.out.py` + `.drive.py`: the findings
  (and so the reference: eager for control-flow rules) come from `analyze` exactly as `jaxfix
  verify` gets them; the rewritten text is the golden `.out.py`;
- the verifier's own cases, `fixtures/verify_selftest/<case>.before.py` + `.after.py` + `.drive.py`
  (named so that the rules' golden harness does not take them for rule cases; no rule owns them,
  so their drive file may say `REFERENCE = "eager"`).

Both go through `verify_result`, the function the CLI calls. The verdict must be `verified`, every
applied fix must carry that evidence, and `EXPECT_COMPILES` (compiles in the second drive run,
original vs rewritten) must match when the driver declares it. A positive case whose output equals
its input (manual findings only) must come back as "nothing was rewritten".

The quick set verifies the first case of each family that rewrites something (verification end
to end, once per family); `--long` verifies every case.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest
from fixture_cases import FIXTURES, discover_cases
from long_support import quick_and_long

from jaxfix.engine import analyze
from jaxfix.engine.config import Config
from jaxfix.model import FileResult
from jaxfix.verify.api import verify_result

SELFTEST = FIXTURES / "verify_selftest"


@dataclass(frozen=True)
class VerifyCase:
    id: str
    original: Path
    rewritten: Path
    driver: Path
    from_rules: bool  # findings come from analyze (a rule's golden case)
    unsafe: bool = False


def discover() -> list[VerifyCase]:
    cases = [
        VerifyCase(c.id, c.input, c.expected, c.driver, True, c.unsafe)
        for c in discover_cases()
        if c.positive and c.driver is not None
    ]
    for before in sorted(SELFTEST.glob("*.before.py")):
        name = before.name[: -len(".before.py")]
        after, driver = SELFTEST / f"{name}.after.py", SELFTEST / f"{name}.drive.py"
        if after.exists() and driver.exists():
            cases.append(VerifyCase(f"verify_selftest/{name}", before, after, driver, False))
    return cases


CASES = discover()


def test_cases_are_discovered():
    assert {c.id for c in CASES} >= {"verify_selftest/jit_in_loop", "verify_selftest/traced_if", "verify_selftest/cached_norm"}


def _expect_compiles(driver: Path) -> tuple[int, int] | None:
    for node in ast.parse(driver.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "EXPECT_COMPILES" for t in node.targets):
            return tuple(ast.literal_eval(node.value))
    return None


def _rewrites(case: VerifyCase) -> bool:
    return case.original.read_bytes() != case.rewritten.read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize(
    "case", quick_and_long(CASES, group=lambda c: c.id.split("/")[0], eligible=_rewrites), ids=lambda c: c.id
)
def test_fixture_rewrite_is_verified(case: VerifyCase):
    original = case.original.read_text(encoding="utf-8")
    rewritten = case.rewritten.read_text(encoding="utf-8")
    if case.from_rules:
        # preview mode: the fixtures' golden outputs are what the rules rewrite, preview findings included
        config = Config(select=("ALL",), unsafe_fixes=case.unsafe, preview=True)
        result = analyze(original, str(case.original), config, fix=True)
        result.fixed_source = rewritten  # verify the golden output itself
    else:
        result = FileResult(path=str(case.original), source=original, fixed_source=rewritten)
    verification = verify_result(result, examples=str(case.driver), device="cpu", timeout=120)
    if original == rewritten:
        # Only manual findings (or fixes this config does not apply): nothing to run side by side.
        assert verification.evidence.detail == "nothing was rewritten"
        assert not result.fixes_applied, [f.code for f in result.fixes_applied]
        return

    assert verification.evidence.verdict == "verified", verification.evidence.detail
    for finding in verification.findings:
        if finding.fix is not None and finding.fix.applicable:
            assert finding.fix.evidence is not None and finding.fix.evidence.verdict == "verified", (
                finding.code,
                finding.fix.evidence,
            )
    drive = verification.unit("drive()")
    assert drive is not None and drive.evidence.verdict == "verified", drive
    assert drive.evidence.data["inputs"] >= 1
    assert verification.device.startswith("cpu")
    expect = _expect_compiles(case.driver)
    if expect is not None:
        if verification.parts:  # each rule's fixes were judged alone: the expected counts are the whole rewrite's
            whole = verify_result(result, examples=str(case.driver), device="cpu", timeout=120, apart=False)
            drive = whole.unit("drive()")
        assert tuple(drive.evidence.data["compiles"]) == expect, drive.evidence.detail
