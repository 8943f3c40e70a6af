"""The labelled real-world corpus (benchmarks/realworld/, issue #20): headers and pinned verdicts.

Every case's verdict (TP/FN/TN/FP and the codes found) is pinned in
benchmarks/realworld/verdicts.json. A change in detection that flips a case, for better or worse,
fails here with the case's name; when the change is intended, rewrite the pins with
`python benchmarks/realworld.py --update` and commit the diff with the change.

In-process and cheap: the same `analyze` + project index the benchmark uses, no jax import, no
subprocess.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
_SPEC = importlib.util.spec_from_file_location("realworld_bench", ROOT / "benchmarks" / "realworld.py")
realworld = importlib.util.module_from_spec(_SPEC)
sys.modules.setdefault("realworld_bench", realworld)
_SPEC.loader.exec_module(realworld)

CASES = realworld.discover()
BY_NAME = {case.name: case for case in CASES}
PINS = json.loads(realworld.PINS.read_text(encoding="utf-8"))


def test_corpus_size_and_balance():
    assert len(CASES) >= 80
    flags = sum(case.positive for case in CASES)
    clean = len(CASES) - flags
    assert abs(flags - clean) <= len(CASES) // 10, (flags, clean)
    for family in realworld.FAMILIES:
        kinds = Counter(case.positive for case in CASES if case.family == family)
        assert kinds[True] >= 4 and kinds[False] >= 4, (family, kinds)
    assert {case.strictness for case in CASES} == set(realworld.STRICTNESS)


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_case_is_well_formed(name):
    case = BY_NAME[name]
    assert case.source.startswith("https://github.com/")
    assert case.pattern and len(case.pattern) > 20
    assert case.files, "a folder case needs at least one module"
    for path in case.files:
        ast.parse(path.read_text(encoding="utf-8"), filename=str(path))  # every case is valid Python
    if case.path.is_dir():
        assert len(case.files) >= 1 and (case.path / "CASE.txt").is_file()
    else:
        lines = case.path.read_text(encoding="utf-8").splitlines()
        assert len(lines) <= 60, "reduce the case to its pattern"


def test_header_parser_rejects_bad_headers(tmp_path):
    good = "# source: https://github.com/o/r/issues/1\n# pattern: something long enough to say\n"
    cases = {
        "no source": "# pattern: p\n# expect: no-flag\n# family: control\n# strictness: strict\n",
        "bad expect": good + "# expect: flag 301\n# family: control\n# strictness: strict\n",
        "bad family": good + "# expect: no-flag\n# family: loops\n# strictness: strict\n",
        "code outside family": good + "# expect: flag JAX201\n# family: control\n# strictness: strict\n",
        "bad strictness": good + "# expect: no-flag\n# family: control\n# strictness: easy\n",
    }
    for why, text in cases.items():
        path = tmp_path / "case.py"
        path.write_text(text + "x = 1\n", encoding="utf-8")
        with pytest.raises(realworld.HeaderError):
            realworld.parse_header(path)
        del why
    path = tmp_path / "case.py"
    path.write_text(good + "# expect: flag JAX301|JAX305 JAX304\n# family: control\n# strictness: hard\n", encoding="utf-8")
    assert realworld.parse_header(path)["expect"] == ("JAX301|JAX305", "JAX304")


def test_pins_cover_exactly_the_cases():
    assert set(PINS) == set(BY_NAME), "run `python benchmarks/realworld.py --update` after adding or removing a case"


@pytest.fixture(scope="module")
def results():
    return {case.name: realworld.run_case(case) for case in CASES}


@pytest.mark.parametrize("name", sorted(BY_NAME))
def test_verdict_is_pinned(name, results):
    got = realworld.pinned({name: results[name]})[name]
    assert got == PINS.get(name), (
        f"{name}: verdict changed from {PINS.get(name)} to {got}; if intended, "
        "run `python benchmarks/realworld.py --update` and commit the new pins"
    )


def test_summary_counts_add_up(results):
    summary = realworld.summarise(CASES, results)
    overall = summary["overall"]
    assert overall["TP"] + overall["FN"] + overall["TN"] + overall["FP"] == len(CASES)
    head = summary["headline"]
    assert head["strict_negatives"] == sum(c.strictness == "strict" and not c.positive for c in CASES)
    assert head["callgraph_cases"] == sum(c.strictness == "callgraph" for c in CASES)
