"""Failure injection the other tests do not cover: inputs at the parsers' limits (huge files,
very deep and very long expressions), a write that fails with ENOSPC and a read-only folder,
through the real command line in subprocesses. Each must give a one-line message or a result,
lose nothing, complete the run, and print no Python traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

HEADER = "import jax\n\n\n@jax.jit\ndef f(x):\n    return "
JIT_IN_LOOP = "import jax\n\n\ndef g(x):\n    for i in range(3):\n        x = jax.jit(lambda v: v * 2)(x)\n    return x\n"
JIT_IN_LOOP_FIXED_LINE = "        x = _g_lambda_jit(x)\n"


def jaxfix(*args, cwd=None, timeout=240):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "jaxfix", *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=timeout
    )


def assert_clean_run(proc, bad: Path):
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-2000:])  # errors reported, run completed
    assert "Traceback" not in proc.stderr + proc.stdout
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and str(bad) in errors[0], proc.stderr[-2000:]


@pytest.mark.parametrize(
    "name, expression",
    [
        # A chain of `and`s is one flat BoolOp to `ast` but 12,000 nested nodes to libcst: its
        # native parser overflowed the C stack and killed the process (segmentation fault, exit
        # -11, no message, the other files' results lost). Fixed by jaxfix.analysis.cstparse.
        ("long_and_chain", " and ".join(["x"] * 12000)),
        ("deep_parentheses", "1+(" * 5000 + "x" + ")" * 5000),  # CPython: too many nested parentheses
        ("flat_sum", "+".join(["a"] * 100000)),  # CPython: RecursionError during ast construction
        ("deep_conditional", "x if x else " * 1000 + "x"),  # libcst parses it, the rules' visitors cannot
    ],
)
def test_deep_and_long_expressions_give_one_line_and_keep_the_other_files(tmp_path, name, expression):
    bad = tmp_path / f"{name}.py"
    bad.write_text(HEADER + expression + "\n")
    good = tmp_path / "loop.py"
    good.write_text(JIT_IN_LOOP)
    before = bad.read_bytes()
    for args in (("check",), ("fix", "--write")):
        # --preview: the visitor the `and` chain defeats is JAX305's, a rule a default run of a
        # file without `noqa` does not run (its findings are all preview: `Rule.preview_only`)
        proc = jaxfix(*args, "--preview", "--no-cache", "-j", "1", str(tmp_path))
        assert_clean_run(proc, bad)
        assert bad.read_bytes() == before
    assert JIT_IN_LOOP_FIXED_LINE in good.read_text()  # the good file was fixed in the same run


def test_deep_expression_in_a_pool_worker_does_not_break_the_pool(tmp_path):
    bad = tmp_path / "chain.py"
    bad.write_text(HEADER + " and ".join(["x"] * 12000) + "\n")
    for i in range(10):
        (tmp_path / f"m{i}.py").write_text(JIT_IN_LOOP)
    proc = jaxfix("check", "--preview", "--no-cache", "-j", "2", str(tmp_path))  # JAX305 meets the chain
    assert "Traceback" not in proc.stderr and "BrokenProcessPool" not in proc.stderr
    assert proc.stdout.count("JAX201") == 10


def test_a_fix_in_a_file_that_also_holds_a_long_chain(tmp_path):
    # The rules that walk the whole tree give up on this file (one line each); the file is left
    # as it was, and the parse for a fix's import (add_imports) is as safe as the first parse.
    path = tmp_path / "both.py"
    path.write_text(JIT_IN_LOOP + "\n\ndef h(x):\n    return " + " and ".join(["x"] * 12000) + "\n")
    before = path.read_bytes()
    proc = jaxfix("fix", "--write", "--no-cache", "-j", "1", str(path))
    assert_clean_run(proc, path)
    assert "nested too deeply" in proc.stderr
    assert path.read_bytes() == before


@pytest.mark.long  # half a minute to a few minutes of parsing
def test_ten_megabyte_file_is_read_and_completes(tmp_path):
    # 10 MB that mentions jax but no token of any rule's prefilter: read, decoded, scanned, done.
    # (10 MB that passes the prefilters is accepted too, but takes minutes: see the report.)
    parts, size, i = ["import jax\nimport numpy as np\n"], 0, 0
    while size < 10_000_000:
        text = f"\n\ndef f{i}(x):\n    y = np.sin(x) + {i}\n    return y * 2\n"
        parts.append(text)
        size += len(text)
        i += 1
    huge = tmp_path / "huge.py"
    huge.write_text("".join(parts))
    good = tmp_path / "loop.py"
    good.write_text(JIT_IN_LOOP)
    # ast.parse of 10 MB takes seconds (twice: project index and scan); minutes on a loaded machine
    proc = jaxfix("fix", "--write", "--no-cache", "-j", "1", str(tmp_path), timeout=900)
    assert proc.returncode in (0, 1) and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert huge.stat().st_size >= 10_000_000 and JIT_IN_LOOP_FIXED_LINE in good.read_text()


def test_parsing_config_equals_the_modules_own():
    """`cstparse.parsing_config` is `Module.config_for_parsing`, built once per style: equal
    configs, and the statements parsed with it render the same in the file's style."""
    import libcst as cst

    from jaxfix.analysis.cstparse import parsing_config

    for source in ("x = 1\n", "def f():\n\treturn 1\r\n", "if x:\n   y = 2\n"):
        module = cst.parse_module(source)
        config = parsing_config(module)
        assert config == module.config_for_parsing and parsing_config(module) is config
        statement = cst.parse_statement("if a:\n    b = 1\n", config=config)
        assert module.code_for_node(statement) == module.code_for_node(
            cst.parse_statement("if a:\n    b = 1\n", config=module.config_for_parsing)
        )
