"""Ruff's command-line habits that a newcomer types first (issue #33, item 4), through the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys

from typer.testing import CliRunner

from jaxfix.cli import app

PROGRAM = """\
import jax
import jax.numpy as jnp


@jax.jit
def clip(x, limit):
    if x.sum() > limit:
        x = x / limit
    return x
"""


def _invoke(args, cwd):
    old = os.getcwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(app, args)
    finally:
        os.chdir(old)


def test_check_without_paths_checks_the_current_folder(tmp_path):
    (tmp_path / "m.py").write_text(PROGRAM)
    result = _invoke(["check", "--no-cache"], tmp_path)
    assert result.exit_code == 1, result.output
    assert "m.py:7:5: JAX301" in result.output


def test_check_fix_applies_the_safe_fixes_and_diff_only_shows_them(tmp_path):
    path = tmp_path / "m.py"
    path.write_text(PROGRAM)
    shown = _invoke(["check", "--no-cache", "--diff", "m.py"], tmp_path)
    assert "+    x = jnp.where(" in shown.output and path.read_text() == PROGRAM
    fixed = _invoke(["check", "--no-cache", "--fix", "m.py"], tmp_path)
    assert fixed.exit_code == 0, fixed.output
    assert "jnp.where(x.sum() > limit" in path.read_text()
    again = _invoke(["check", "--no-cache", "m.py"], tmp_path)
    assert again.exit_code == 0, again.output  # one finding, one fix: nothing left at the site


def test_show_fixes_names_the_fix_that_fix_applies(tmp_path):
    (tmp_path / "m.py").write_text(PROGRAM)
    check = _invoke(["check", "--no-cache", "--show-fixes", "m.py"], tmp_path)
    title = next(line for line in check.output.splitlines() if line.startswith("    fix ("))
    assert title == "    fix (safe): replace with `jnp.where`"
    fixed = _invoke(["check", "--no-cache", "--fix", "--show-fixes", "m.py"], tmp_path)
    assert "1 × JAX301 (traced-if)" in fixed.output


def test_server_is_the_language_server():
    result = CliRunner().invoke(app, ["server", "--help"])
    assert result.exit_code == 0 and "language server" in result.output


def test_help_has_plain_metavars():
    text = CliRunner().invoke(app, ["check", "--help"]).output
    assert "[PATHS]..." in text and "{paths}" not in text and "--select CODES" in text


def test_a_ruff_option_gets_a_one_line_hint(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-m", "jaxfix", "check", "--extend-select", "JAX1", "."],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert "--select" in proc.stderr


def test_the_fix_summary_comes_after_the_errors(tmp_path):
    (tmp_path / "bad.py").write_text("def f(:\n")
    (tmp_path / "m.py").write_text(PROGRAM)
    proc = subprocess.run(
        [sys.executable, "-m", "jaxfix", "fix", "--no-cache", "."],
        cwd=tmp_path, capture_output=True, text=True, check=False,
    )
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2
    assert any(line.startswith("error:") for line in lines)
    assert lines[-1].startswith("Would fix"), lines


def test_watch_checks_again_when_a_file_changes(tmp_path):
    import time

    path = tmp_path / "m.py"
    path.write_text(PROGRAM)
    err = tmp_path / "watch.err"
    with open(err, "w") as stream:
        proc = subprocess.Popen(
            [sys.executable, "-m", "jaxfix", "check", "--watch", "--no-cache", "m.py"],
            cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=stream,
        )
    try:

        def runs() -> int:
            return err.read_text().count("Watching for file changes")

        deadline = time.monotonic() + 240
        while runs() < 1 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert runs() == 1 and "Found 1 problem" in err.read_text()
        path.write_text(PROGRAM.replace("    if x.sum() > limit:\n        x = x / limit\n", ""))
        while runs() < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert runs() == 2 and err.read_text().count("All checks passed!") == 1
    finally:
        proc.terminate()
        proc.wait(timeout=30)
