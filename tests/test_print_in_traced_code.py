"""JAX401 where the print is reached under a trace: code behind a traced `if`/`while` test never is,
as the test raises `TracerBoolConversionError` first (`guards.behind_a_traced_test`)."""

from __future__ import annotations

import textwrap

import jax
import jax.numpy as jnp
import pytest

from jaxfix.engine import analyze
from jaxfix.engine.config import Config

# matomatical/hijax@<heldout16> jit_dojo/lesson7.py:9-18 (lines 15 and 18 labelled wrong, with a safe fix)
LESSON = """
import jax


def f(a):
    print("trace a:", a)
    n, = a.shape
    pos0 = a[0] > 0
    print(f"trace pos0={pos0}")
    if n > 0 and pos0:
        print("->", a)
        return a
    else:
        print("->", -a)
        return -a
    print("after", a)


f_jit = jax.jit(f)
"""


def lines(source: str) -> list[int]:
    result = analyze(textwrap.dedent(source), "lesson.py", Config(select=("JAX401",), preview=True))
    assert result.error is None, result.error
    return [f.line for f in result.findings]


def test_prints_behind_a_traced_test_are_not_reached_under_the_trace():
    assert lines(LESSON) == [6, 9]


def test_the_same_prints_behind_a_static_test_are_reported():
    static = LESSON.replace("if n > 0 and pos0:", "if n > 0:")
    assert lines(static) == [6, 9, 11, 14, 16]


def test_the_lesson_raises_at_the_test_before_the_branch_prints(capsys):
    namespace: dict = {}
    exec(compile(LESSON, "lesson.py", "exec"), namespace)
    with pytest.raises(jax.errors.TracerBoolConversionError):
        namespace["f_jit"](jnp.array([5, 5]))
    printed = capsys.readouterr().out
    assert "trace a:" in printed and "->" not in printed
