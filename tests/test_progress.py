"""The progress bar of `check`/`fix` over files: drawn on a terminal's stderr, silent otherwise."""

from __future__ import annotations

import io
import subprocess
import sys

from test_cli import JIT_IN_LOOP

from jaxfix.progress import progress


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def drawn(stream, monkeypatch, enabled=True) -> str:
    monkeypatch.setattr(sys, "stderr", stream)
    with progress(enabled) as bar:
        bar.total(3)
        bar.advance()
        bar.advance()
    return stream.getvalue()


def test_the_bar_is_drawn_on_a_terminal(monkeypatch):
    out = drawn(FakeTerminal(), monkeypatch)
    assert "jaxfix" in out and "2/3" in out  # the last state is drawn when the bar stops


def test_no_bar_off_a_terminal_or_when_quiet(monkeypatch):
    assert drawn(io.StringIO(), monkeypatch) == ""
    assert drawn(FakeTerminal(), monkeypatch, enabled=False) == ""


def test_fix_and_check_piped_print_no_bar(tmp_path):
    for i in range(3):
        (tmp_path / f"m{i}.py").write_text(JIT_IN_LOOP)
    for argv in (["fix", "--write", "--no-cache", "."], ["check", "--no-cache", "."]):
        proc = subprocess.run([sys.executable, "-m", "jaxfix", *argv], cwd=tmp_path, capture_output=True, text=True)
        assert proc.returncode in (0, 1), proc.stderr
        assert "\x1b[" not in proc.stderr and "━" not in proc.stderr and "0:00" not in proc.stderr


def test_a_file_analysed_here_shows_its_rules_findings_and_fix_round(monkeypatch):
    """One large file must not sit at 0/1: the steps of its analysis (`engine.steps`) show in the
    bar's description while it runs."""
    from jaxfix.engine import steps

    monkeypatch.setattr(sys, "stderr", FakeTerminal())
    with progress(True) as bar:
        bar.total(1)
        steps.rule_done("pkg/big.py", 3, 10, 1234)
        assert bar.bar.tasks[0].description == "jaxfix big.py: rules 3/10, 1,234 findings"
        steps.fix_round(1, 800)
        assert bar.bar.tasks[0].description == "jaxfix big.py round 1 (800 fixed)"
        steps.rule_done("pkg/big.py", 10, 10, 400)
        assert bar.bar.tasks[0].description == "jaxfix big.py round 1 (800 fixed): rules 10/10"
        bar.advance()
        assert bar.bar.tasks[0].description == "jaxfix" and bar.bar.tasks[0].completed == 1
    steps.rule_done("pkg/big.py", 1, 10, 0)  # no bar any more: nothing is listening


def test_steps_reach_the_bar_from_a_real_fix(monkeypatch, tmp_path):
    """`fix` of a file in this process reports its rules and rounds to the listener."""
    from jaxfix.engine import steps

    seen = []
    path = tmp_path / "m.py"
    path.write_text(JIT_IN_LOOP)
    steps.listen(lambda kind, where, *numbers: seen.append((kind, where, numbers)))
    try:
        from jaxfix.cli import app
        from typer.testing import CliRunner

        CliRunner().invoke(app, ["fix", "--write", "--no-cache", "-q", str(path)])
    finally:
        steps.listen(None)
    assert any(kind == "rule" and where.endswith("m.py") for kind, where, _ in seen)
    assert any(kind == "round" for kind, _, _ in seen)
