"""A finding's line is its line in the file the user has: the file on disk in a dry run (and for
applied fixes, which verification places in the original), the written file after --write.

The program needs two fix rounds: the `while` rewrite (round 1) spans the nested `if`, whose
fix waits for round 2, when the loop body has moved into a new function; the manual `print`
below both moves down as the rewrite adds lines.
"""

from __future__ import annotations

from typer.testing import CliRunner

from jaxfix.cli import app
from jaxfix.engine import analyze
from jaxfix.engine.config import Config
from jaxfix.engine.linemap import LineMap

PROGRAM = """\
import jax
import jax.numpy as jnp


@jax.jit
def grow(x, n):
    i = 0
    while i < n:
        if x.sum() > 10:
            x = x / 2
        x = x * 3
        i = i + 1
    return x


@jax.jit
def dump(x, *rest):
    print(*rest)
    return x
"""
IF_LINE = 9  # `if x.sum() > 10:` on disk
PRINT_LINE = 18  # `print(*rest)` on disk


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _analyze():
    result = analyze(PROGRAM, "m.py", Config(select=("ALL",), unsafe_fixes=True), fix=True)
    assert result.error is None, result.error
    assert result.rounds == 2
    return result


def test_second_round_fix_is_placed_in_the_original():
    result = _analyze()
    jax301 = [f for f in result.fixes_applied if f.code == "JAX301"]
    assert [(f.line, f.end_line) for f in jax301] == [(IF_LINE, IF_LINE + 1)]
    assert _line_of(result.fixed_source, "jnp.where(x.sum() > 10") != IF_LINE  # it did move


def test_remaining_finding_has_both_lines():
    result = _analyze()
    (in_fixed,) = [f for f in result.remaining if f.code == "JAX401"]
    (on_disk,) = [f for f in result.remaining_in_source if f.code == "JAX401"]
    assert on_disk.line == PRINT_LINE == _line_of(PROGRAM, "print(*rest)")
    assert in_fixed.line == _line_of(result.fixed_source, "print(*rest)") > PRINT_LINE
    assert on_disk.column == in_fixed.column


def test_dry_run_prints_lines_of_the_file_on_disk(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(PROGRAM)
    out = CliRunner().invoke(app, ["fix", "--unsafe-fixes", str(path)]).stdout
    assert f"m.py:{PRINT_LINE}:5: JAX401" in out
    assert path.read_text() == PROGRAM


def test_write_prints_lines_of_the_written_file(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(PROGRAM)
    out = CliRunner().invoke(app, ["fix", "--unsafe-fixes", "--write", "--allow-dirty", str(path)]).stdout
    written = path.read_text()
    assert written != PROGRAM
    assert f"m.py:{_line_of(written, 'print(*rest)')}:5: JAX401" in out


def test_line_map_sends_changed_lines_to_the_start_of_their_region():
    lines = LineMap()
    lines.record("a\nb\nc\nd\n", "a\nB1\nB2\nB3\nc\nd\n")  # b replaced by three lines
    assert [lines.original_line(n) for n in range(1, 7)] == [1, 2, 2, 2, 3, 4]
    lines.record("a\nB1\nB2\nB3\nc\nd\n", "new\na\nB1\nB2\nB3\nc\nd\n")  # a line added on top
    assert [lines.original_line(n) for n in range(1, 8)] == [1, 1, 2, 2, 2, 3, 4]


def test_verify_prints_applied_fixes_at_lines_of_the_file_on_disk(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(PROGRAM)
    out = CliRunner().invoke(app, ["fix", "--verify", "--unsafe-fixes", str(path)]).stdout
    evidence = [line.strip() for line in out.splitlines() if line.startswith("  ") and "m.py:" in line]
    codes = {line.split(": ")[1].split()[0]: line.split("m.py:")[1].split(":")[0] for line in evidence}
    assert codes == {"JAX302": "8", "JAX301": str(IF_LINE)}, evidence
