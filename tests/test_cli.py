"""The command line end to end: real files in temporary trees, typer's runner and real subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from jaxfix.cli import app

# Recompiles on every iteration: a fresh lambda is a new jit cache key each time.
JIT_IN_LOOP = """\
import jax
import jax.numpy as jnp


def run(xs):
    total = jnp.zeros(())
    for x in xs:
        total = total + jax.jit(lambda v: v * 2.0)(x)
    return total
"""

CLEAN = """\
import jax


@jax.jit
def double(v):
    return v * 2.0
"""


def cli(*args, input=None):
    result = CliRunner().invoke(app, list(args), input=input)
    return result.exit_code, result.stdout, result.stderr


def subprocess_cli(*args, cwd=None, input=None):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [sys.executable, "-m", "jaxfix", *args], capture_output=True, text=True, cwd=cwd, input=input, env=env
    )
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "bad.py").write_text(JIT_IN_LOOP)
    (tmp_path / "good.py").write_text(CLEAN)
    return tmp_path


def test_check_reports_findings_with_exit_1(tree):
    code, out, err = cli("check", str(tree))
    assert code == 1
    lines = out.splitlines()
    assert lines and all(line.startswith(str(tree / "bad.py") + ":8:") for line in lines)
    assert " JAX2" in lines[0] and "[*]" in lines[0]
    assert "Found" in err


def test_check_clean_exits_0_and_zero_files_is_fine(tree, tmp_path):
    assert cli("check", str(tree / "good.py"))[0] == 0
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out, err = cli("check", str(empty))
    assert code == 0 and out == ""


def test_check_error_exit_2_names_file_and_keeps_going(tree):
    (tree / "broken.py").write_text("def f(:\n    jax.jit\n")
    (tree / "latin.py").write_bytes(b"x = '\xe9'  # jax\n")
    (tree / "blob.py").write_bytes(b"\x00\x01jax")
    code, out, err = cli("check", str(tree))
    assert code == 2
    assert "bad.py:8:" in out  # the good files were still checked
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(errors) == 3
    assert any("broken.py" in e and "syntax error" in e for e in errors)
    assert any("latin.py" in e and "utf-8" in e for e in errors)
    assert any("blob.py" in e and "binary" in e for e in errors)


def test_select_and_ignore(tree):
    assert cli("check", str(tree), "--ignore", "JAX2")[0] == 0
    assert cli("check", str(tree), "--select", "JAX1")[0] == 0
    assert cli("check", str(tree), "--select", "JAX2")[0] == 1
    code, _, err = cli("check", str(tree), "--select", "NOPE9")
    assert code == 2 and "unknown rule code" in err


def test_noqa_and_skip_file(tree):
    (tree / "bad.py").write_text(JIT_IN_LOOP.replace("(x)\n", "(x)  # noqa: JAX2\n"))
    assert cli("check", str(tree))[0] == 0
    (tree / "bad.py").write_text("# jaxfix: skip-file\n" + JIT_IN_LOOP)
    assert cli("check", str(tree))[0] == 0


def test_json_output(tree):
    code, out, _ = cli("check", str(tree), "--output-format", "json")
    data = json.loads(out)
    assert code == 1 and len(data) >= 1
    first = data[0]
    for key in ("code", "name", "path", "line", "column", "end_line", "end_column", "message", "fix"):
        assert key in first
    assert first["fix"]["safety"] in ("safe", "unsafe", "manual") and first["fix"]["edits"]


def test_sarif_output_validates_against_required_fields(tree):
    jsonschema = pytest.importorskip("jsonschema")
    code, out, _ = cli("check", str(tree), "--output-format", "sarif")
    log = json.loads(out)
    # The structural core of the SARIF 2.1.0 schema (the full schema cannot be fetched offline).
    schema = {
        "type": "object",
        "required": ["version", "runs"],
        "properties": {
            "version": {"const": "2.1.0"},
            "runs": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["tool", "results"],
                    "properties": {
                        "tool": {
                            "type": "object",
                            "required": ["driver"],
                            "properties": {"driver": {"type": "object", "required": ["name", "rules"]}},
                        },
                        "results": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["ruleId", "message", "locations"],
                                "properties": {"message": {"type": "object", "required": ["text"]}},
                            },
                        },
                    },
                },
            },
        },
    }
    jsonschema.validate(log, schema)
    # And the full SARIF 2.1.0 object model, as published by a SARIF validator package.
    from sarif_pydantic import Sarif

    parsed = Sarif.model_validate(log)
    assert parsed.version == "2.1.0" and parsed.runs[0].results
    result = log["runs"][0]["results"][0]
    assert result["ruleId"].startswith("JAX2")
    assert result["fixes"][0]["artifactChanges"][0]["replacements"]


def test_github_annotations(tree):
    code, out, _ = cli("check", str(tree), "--output-format", "github")
    assert code == 1 and out.startswith("::error file=") and ",line=8," in out


def test_statistics(tree):
    code, out, _ = cli("check", str(tree), "--statistics")
    assert code == 1 and "JAX2" in out and out.split()[0] == "1"


def test_fix_dry_run_prints_diff_and_writes_nothing(tree):
    before = (tree / "bad.py").read_bytes()
    code, out, err = cli("fix", str(tree))
    assert code == 1
    assert out.startswith(f"--- {tree / 'bad.py'}") and "+++" in out
    assert (tree / "bad.py").read_bytes() == before
    assert "Would fix 1 problem in 1 file" in err


def test_fix_write_applies_and_second_run_is_clean(tree):
    code, _, err = cli("fix", str(tree), "--write")
    assert code == 0, err
    assert (tree / "bad.py").read_text() != JIT_IN_LOOP
    assert cli("check", str(tree))[0] == 0
    assert cli("fix", str(tree))[0] == 0


def test_fix_keeps_crlf_bom_and_mode(tree):
    path = tree / "bad.py"
    path.write_bytes(b"\xef\xbb\xbf" + JIT_IN_LOOP.replace("\n", "\r\n").encode())
    os.chmod(path, 0o750)
    assert cli("fix", str(path), "--write")[0] == 0
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf")
    assert data.count(b"\n") == data.count(b"\r\n") and b"\r\n" in data
    assert (path.stat().st_mode & 0o777) == 0o750


def test_bad_files_stay_byte_for_byte_unchanged_on_write(tree):
    broken = b"def f(:\r\n  jax.jit(lambda: 1)\r\n"
    (tree / "broken.py").write_bytes(broken)
    code, _, err = cli("fix", str(tree), "--write")
    assert code == 2 and "broken.py" in err
    assert (tree / "broken.py").read_bytes() == broken
    assert (tree / "bad.py").read_text() != JIT_IN_LOOP  # the run went on


def test_stdin(tree):
    code, out, _ = cli("check", "-", input=JIT_IN_LOOP)
    assert code == 1 and out.startswith("-:8:")
    code, out, _ = cli("check", "-", "--stdin-filename", "pkg/mod.py", input=JIT_IN_LOOP)
    assert out.startswith("pkg/mod.py:8:")
    code, out, _ = cli("fix", "-", "--write", input=JIT_IN_LOOP)
    assert code == 0 and out != JIT_IN_LOOP and "jax.jit" in out


def test_config_errors_exit_2(tree):
    (tree / "pyproject.toml").write_text("[tool.jaxfix]\nselect = 'JAX'\n")
    code, _, err = cli("check", str(tree))
    assert code == 2 and "pyproject.toml" in err and "select" in err


def test_rules_and_rule(tree):
    code, out, _ = cli("rules")
    assert code == 0 and "JAX2" in out and "fix:" in out
    code, out, _ = cli("rule", out.split()[0])
    assert code == 0 and "## Reported (1)" in out and "## Not reported (1)" in out and "Why" in out
    assert cli("rule", "JAX999")[0] == 2


def test_parallel_output_is_identical_to_serial(tmp_path):
    for i in range(12):
        (tmp_path / f"m{i:02}.py").write_text(JIT_IN_LOOP if i % 2 else CLEAN)
    serial = subprocess_cli("check", str(tmp_path), "-j", "1")
    parallel = subprocess_cli("check", str(tmp_path), "-j", "2")
    assert serial[0] == parallel[0] == 1
    assert serial[1] == parallel[1] and serial[1].count("\n") == 6


def test_version_help_and_module_entry_point():
    code, out, _ = subprocess_cli("--version")
    assert code == 0 and out.startswith("jaxfix ")
    for command in ("check", "fix", "rules", "rule"):
        code, out, _ = subprocess_cli(command, "--help")
        assert code == 0 and "Usage" in out


def test_add_noqa_then_clean_then_unused_noqa(tree):
    code, _, err = cli("check", str(tree), "--add-noqa", "--no-cache")
    assert code == 0 and "Added noqa to 1 line" in err
    text = (tree / "bad.py").read_text()
    assert "# noqa: JAX2" in text
    assert cli("check", str(tree), "--no-cache")[0] == 0
    # Once the code is fixed by hand, the suppression is stale and JAX001 says so.
    (tree / "bad.py").write_text(CLEAN.replace("return v * 2.0", "return v * 2.0  # noqa: JAX201"))
    code, out, _ = cli("check", str(tree), "--no-cache")
    assert code == 1 and "JAX001" in out


def test_a_syntax_error_is_reported_even_where_no_rule_would_look(tmp_path):
    """A file that names no JAX transform is skipped by every prefilter, but still parsed: its
    syntax error is one line naming the file, exit 2, and the summary does not say "passed"."""
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n")
    (tmp_path / "fine.py").write_text("x = 1\n")
    result = CliRunner().invoke(app, ["check", str(tmp_path)])
    assert result.exit_code == 2
    errors = [line for line in result.stderr.splitlines() if "broken.py" in line]
    assert len(errors) == 1 and "syntax error at line 1, column 7" in errors[0], errors
    assert "passed" not in result.output + result.stderr
    assert "1 file could not be checked" in result.stderr


PEP_695 = """\
import jax

type Vec = jax.Array


def first[T](xs: list[T]) -> T:
    return xs[0]


@jax.jit
def f(x):
    if x > 0:
        return x
    return -x
"""


def test_python_3_12_syntax_is_checked_or_named_for_what_it_is(tmp_path):
    """A file with a `type` statement and generics is valid Python 3.12. On 3.12+ it is checked;
    on 3.10/3.11 the error says why it cannot be (not a bare "syntax error") and the file is left
    as it was."""
    target = tmp_path / "generic.py"
    target.write_text(PEP_695)
    result = CliRunner().invoke(app, ["check", "--select", "ALL", "--no-cache", str(target)])
    if sys.version_info >= (3, 12):
        assert result.exit_code == 1 and "JAX301" in result.stdout, result.output
    else:
        assert result.exit_code == 2
        errors = [line for line in result.stderr.splitlines() if "generic.py" in line]
        assert len(errors) == 1 and "line 3 uses syntax newer than this Python" in errors[0], errors
        assert "syntax error" not in errors[0]
    assert target.read_text() == PEP_695


def test_manual_guidance_is_printed_once(tmp_path):
    target = tmp_path / "loop.py"
    target.write_text(
        "import jax\n\n\n@jax.jit\ndef f(x):\n    return int(x.sum())\n"
    )
    result = CliRunner().invoke(app, ["check", str(target)])
    (line,) = [line for line in result.output.splitlines() if "JAX304" in line]
    assert "manual:" in line
    assert line.count("static_argnames") == 1, line


def test_manual_guidance_behind_a_lead_in_is_not_repeated(tmp_path):
    # JAX202's manual fix is titled "Hoist by hand: <reason>" and its message already gives the reason.
    target = tmp_path / "factory.py"
    target.write_text(
        "import jax\n\n\ndef run(xs, backend):\n"
        "    @jax.jit\n    def step(x, b=backend):\n        return x + 1\n\n"
        "    return step(xs)\n\n\ndef run_all(batches, backend):\n"
        "    return [run(xs, backend) for xs in batches]\n"
    )
    result = CliRunner().invoke(app, ["check", str(target)])
    (line,) = [line for line in result.output.splitlines() if "JAX202" in line]
    assert "manual:" not in line and line.count("read local `backend`") == 1, line


# -- `check` without typer's parsing (`cli.plain_arguments`) ---------------------------------
PLAIN_LINES = [
    ["src"],
    ["a.py", "b", "-"],
    ["--select", "ALL", "-j", "2", "--statistics", "src"],
    ["src", "--select", "JAX1", "--select=JAX2,JAX3", "--ignore", "JAX101", "-j2", "-q"],
    ["--no-cache", "--output-format", "json", "--config", "pyproject.toml", "src"],
    ["--output-format=sarif", "--jobs=3", "--changed-since", "HEAD~1", "--shard", "1/2", "src"],
    ["--stdin-filename", "m.py", "--add-noqa", "--quiet", "-"],
    ["--select", "-x", "src"],  # an option's value may start with a dash, as click takes it
    ["--", "--not-an-option.py", "src"],
]


def _typer_kwargs(args):
    """What typer itself calls `check` with for `args`: the same declarations, a recording body."""
    import functools

    import typer

    from jaxfix.cli import check

    seen = []
    recorder = functools.wraps(check)(lambda **kwargs: seen.append(kwargs))
    single = typer.Typer()
    single.command()(recorder)
    result = CliRunner().invoke(single, args)
    assert result.exit_code == 0, result.output
    return seen[0]


@pytest.mark.parametrize("args", PLAIN_LINES, ids=" ".join)
def test_plain_check_lines_parse_as_typer_parses_them(args):
    from jaxfix.cli import check, plain_arguments

    expected = _typer_kwargs(args)
    got = plain_arguments(check, args)
    assert got == expected
    assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in expected.items()}


@pytest.mark.parametrize(
    "args",
    [[], ["--help", "src"], ["-qj2", "src"], ["--jobs", "0", "src"], ["-j", "two", "src"],
     ["--output-format", "xml", "src"], ["--bogus", "src"], ["src", "--select"], ["--quiet=1", "src"]],
    ids=" ".join,
)
def test_other_check_lines_are_left_to_typer(args):
    """Help, unknown options, missing or invalid values: typer parses these and reports them."""
    from jaxfix.cli import check, plain_arguments

    assert plain_arguments(check, args) is None


def test_the_typer_free_check_reads_the_options_typer_declares():
    """`checkcmd.CHECK_OPTIONS`/`CHECK_DEFAULTS` (what `python -m jaxfix check` parses a plain line
    with, before typer is imported) are what `cli.check`'s declarations say."""
    from jaxfix import checkcmd
    from jaxfix.cli import check_options

    options, defaults = check_options()
    assert options == checkcmd.CHECK_OPTIONS
    assert defaults == checkcmd.CHECK_DEFAULTS


@pytest.mark.parametrize("args", PLAIN_LINES, ids=" ".join)
def test_the_typer_free_parser_reads_plain_lines_as_typer(args):
    from jaxfix import checkcmd

    expected = _typer_kwargs(args)
    got = checkcmd.parse_check_line(args)
    assert got == expected
    assert {k: type(v) for k, v in got.items()} == {k: type(v) for k, v in expected.items()}


def test_a_plain_check_imports_no_typer(tmp_path):
    """Most runs are cached checks: typer's import was a fifth of one."""
    (tmp_path / "m.py").write_text(CLEAN)
    probe = (  # a plain check leaves by os._exit (`checkcmd.hard_exit`): made a SystemExit here
        "import runpy, sys\nimport jaxfix.checkcmd\njaxfix.checkcmd.hard_exit = sys.exit\n"
        "try:\n    runpy.run_module('jaxfix', run_name='__main__')\nfinally:\n    print('typer' in sys.modules, file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, "check", "--no-cache", "-q", "m.py"], cwd=tmp_path, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "False"
    help_run = subprocess.run(
        [sys.executable, "-c", probe, "check", "--help"], cwd=tmp_path, capture_output=True, text=True
    )
    assert help_run.returncode == 0 and "Usage" in help_run.stdout
    assert help_run.stderr.strip().splitlines()[-1] == "True"


def test_check_with_an_unknown_code_reports_it_as_typer_does(tmp_path):
    """An unknown rule code is found while `check` runs: the command line is then typer's to report."""
    (tmp_path / "m.py").write_text(CLEAN)
    proc = subprocess.run(
        [sys.executable, "-m", "jaxfix", "check", "--select", "NOPE1", "--no-cache", "m.py"],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert proc.returncode == 2
    assert "unknown rule code or prefix 'NOPE1'" in proc.stderr
    assert "Usage:" in proc.stderr


def test_a_broken_pyproject_of_another_tool_warns_and_the_check_goes_on(tree):
    (tree / "pyproject.toml").write_text("[project\nname = \n")
    code, out, err = cli("check", str(tree))
    assert code == 1 and "JAX201" in out
    assert f"warning: {tree / 'pyproject.toml'}: invalid TOML" in err and "error:" not in err
    assert err.index("warning:") < err.index("Found 1 problem")
