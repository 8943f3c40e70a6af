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
