"""The fix loop applies all the non-overlapping fixes of a round in one pass and re-analyses only
what they changed (issue #33, linear fixing of large files): the text it writes must be the text
of applying the same fixes one at a time, each on a full fresh scan of the text before it.

Real files: the generated model-zoo module of `benchmarks/large_file.py` (a few blocks of its ten
families of findings) and every fixture input (`fixtures/**/*.in.py`) with several fixes to apply.
"""

from __future__ import annotations

import functools
import importlib.util
import sys
from pathlib import Path

import pytest

from jaxfix.engine import analyze, selected_rules
from jaxfix.engine.config import Config
from jaxfix.engine.fixing import fix_is_wanted, fix_until_stable, scan

ROOT = Path(__file__).resolve().parent.parent
# every pytree class reported by JAX101 (its fixtures show no instance read under a trace)
CONFIG = Config(select=("ALL",), unsafe_fixes=True).with_options("pytree-cache", **{"unproven-pytrees": True})


def _one_at_a_time(source: str, path: str) -> tuple[str, int]:
    """The fixed text when every round applies one fix and the next round scans the whole text."""
    run = functools.partial(
        scan,
        path=path,
        rules=selected_rules(CONFIG, path),
        code_filter=functools.partial(CONFIG.code_selected, path=path),
        options=CONFIG.options(),
    )
    outcome = fix_until_stable(source, run(source), run, unsafe_fixes=True, max_rounds=10_000, per_round=1)
    assert outcome.error is None
    return outcome.text, len(outcome.applied)


def _large_file_module():
    spec = importlib.util.spec_from_file_location("large_file_bench", ROOT / "benchmarks" / "large_file.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_generated_module_batched_equals_one_fix_at_a_time():
    bench = _large_file_module()
    source = bench.generate(4 * bench.BLOCK.count("\n"))  # 3 blocks: 51 findings, 36 fixes to apply
    batched = analyze(source, "zoo.py", CONFIG, fix=True)
    assert batched.error is None and batched.fixed_source is not None
    assert len(batched.fixes_applied) >= 30
    text, applied = _one_at_a_time(source, "zoo.py")
    assert text == batched.fixed_source
    assert applied == len(batched.fixes_applied)


def _fixtures_with_several_fixes() -> list[Path]:
    found = []
    for path in sorted((ROOT / "fixtures").rglob("*.in.py")):
        source = path.read_text()
        try:
            first = analyze(source, path.name, CONFIG)
        except Exception:  # noqa: BLE001 - a fixture that is not a program (none today)
            continue
        if first.error is None and sum(fix_is_wanted(f, True) for f in first.findings) >= 3:
            found.append(path)
    return found


FIXTURES = _fixtures_with_several_fixes()


def test_there_are_fixtures_with_several_fixes():
    assert len(FIXTURES) >= 10


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: str(p.relative_to(ROOT / "fixtures")))
def test_fixture_batched_equals_one_fix_at_a_time(path: Path):
    source = path.read_text()
    batched = analyze(source, path.name, CONFIG, fix=True)
    assert batched.error is None
    text, applied = _one_at_a_time(source, path.name)
    assert text == (batched.fixed_source or source)
    assert applied == len(batched.fixes_applied)
