"""The diff `fix` prints (dry run, `--output-format json`) of a large file is computed between
anchor lines (`report.diff`), since difflib's matcher on the whole file was quadratic: it must
still be a unified diff that turns the old text into the new one, and a small file keeps
difflib's own diff byte for byte.

Real texts: the generated model-zoo module of `benchmarks/large_file.py` and its fixed text.
"""

from __future__ import annotations

import difflib
import importlib.util
import re
import sys
from pathlib import Path

from jaxfix.engine import analyze
from jaxfix.engine.config import Config
from jaxfix.report import diff

ROOT = Path(__file__).resolve().parent.parent
CONFIG = Config(select=("ALL",), unsafe_fixes=True)
_HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n")


def _generated(lines: int) -> str:
    spec = importlib.util.spec_from_file_location("large_file_bench", ROOT / "benchmarks" / "large_file.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module.generate(lines)


def _patched(old: str, patch: str) -> str:
    """`old` with the unified diff `patch` applied (its hunks in order, context checked)."""
    a = old.splitlines(keepends=True)
    out: list[str] = []
    at = 0
    lines = patch.splitlines(keepends=True)
    assert lines[0].startswith("--- a/") and lines[1].startswith("+++ b/")
    for line in lines[2:]:
        hunk = _HUNK.fullmatch(line)
        if hunk:
            start, length = int(hunk.group(1)), int(hunk.group(2) or 1)
            begin = start - 1 if length else start
            out.extend(a[at:begin])
            at = begin
        elif line[0] == " ":
            assert a[at] == line[1:]
            out.append(line[1:])
            at += 1
        elif line[0] == "-":
            assert a[at] == line[1:]
            at += 1
        else:
            assert line[0] == "+"
            out.append(line[1:])
    out.extend(a[at:])
    return "".join(out)


def test_large_file_diff_turns_the_old_text_into_the_new():
    source = _generated(3000)
    fixed = analyze(source, "zoo.py", CONFIG, fix=True).fixed_source
    assert fixed is not None and source.count("\n") + fixed.count("\n") >= diff.SEGMENTED_FROM
    patch = diff.unified_diff("zoo.py", source, fixed)
    assert _patched(source, patch) == fixed
    # one hunk per generated block (88 of them), not one hunk from the first fix to the last
    assert patch.count("\n@@ ") > 80


def test_small_file_diff_is_difflibs_own():
    source = _generated(400)
    fixed = analyze(source, "zoo.py", CONFIG, fix=True).fixed_source
    assert fixed is not None and source.count("\n") + fixed.count("\n") < diff.SEGMENTED_FROM
    expected = "".join(
        difflib.unified_diff(
            source.splitlines(keepends=True), fixed.splitlines(keepends=True), fromfile="a/zoo.py", tofile="b/zoo.py"
        )
    )
    assert diff.unified_diff("zoo.py", source, fixed) == expected


def test_anchored_opcodes_equal_difflib_where_it_is_unambiguous():
    """Lines unique in both texts, one block changed: both diffs agree."""
    old = "".join(f"line {i}\n" for i in range(3000))
    new = old.replace("line 1500\n", "changed 1500\nadded\n")
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    assert diff._opcodes(a, b) == difflib.SequenceMatcher(None, a, b).get_opcodes()
    assert "".join(diff._unified(a, b, "a/x", "b/x", diff._opcodes(a, b))) == "".join(
        difflib.unified_diff(a, b, fromfile="a/x", tofile="b/x")
    )
