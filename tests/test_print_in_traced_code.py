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


# Guanghan/ngp_jax@<heldout30> notebook_basic_JAX.ipynb cell 24 (the trace-time print demo, real):
# `print("    x = {}".format(x))` in a jitted function. The fix used to pass the whole `.format(...)`
# call to `jax.debug.print`, formatted at trace time, so every call printed the tracer; the
# literal's fields now take the values, as an f-string's do.
FORMATTED = """
import jax
import jax.numpy as jnp


def step(x):
    print("    x = {}".format(x))
    print("sum = {:.2f}, n = {}".format(x.sum(), 3))
    return x * 2
"""


def test_a_format_call_becomes_the_format_string_and_its_values(capsys):
    source = FORMATTED.replace("def step", "@jax.jit\ndef step")
    result = analyze(textwrap.dedent(source), "demo.py", Config(select=("JAX401",)), fix=True)
    assert result.error is None, result.error
    fixed = result.fixed_source
    assert 'jax.debug.print("    x = {}", x, ordered=True)' in fixed
    assert 'jax.debug.print("sum = {:.2f}, n = {}", x.sum(), str(3), ordered=True)' in fixed
    eager: dict = {}
    exec(textwrap.dedent(FORMATTED), eager)
    with jax.disable_jit():
        eager["step"](jnp.arange(3.0))
    expected = capsys.readouterr().out
    rewritten: dict = {}
    exec(fixed, rewritten)
    for _ in range(2):  # the second call hits the cache and prints the values again
        rewritten["step"](jnp.arange(3.0))
    jax.effects_barrier()
    assert capsys.readouterr().out == expected * 2
    percent = source.replace('"    x = {}".format(x)', '"x = %s" % x')
    [finding, _] = analyze(textwrap.dedent(percent), "demo.py", Config(select=("JAX401",)), fix=True).findings
    assert finding.fix.safety.value == "manual"
