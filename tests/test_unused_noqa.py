from test_cli import JIT_IN_LOOP

from jaxfix.engine import analyze
from jaxfix.engine.config import Config


def test_unused_code_is_reported_and_removed():
    source = "x = 1  # noqa: JAX201\ny = 2  # noqa: E501, JAX101\nz = 3  # noqa\n"
    result = analyze(source, "m.py", Config(), fix=True)
    assert [(f.line, f.code) for f in result.findings] == [(1, "JAX001"), (2, "JAX001")]
    assert result.fixed_source == "x = 1\ny = 2  # noqa: E501\nz = 3  # noqa\n"


def test_used_code_is_kept():
    line = next(i for i, text in enumerate(JIT_IN_LOOP.splitlines(), 1) if "jax.jit(" in text)
    lines = JIT_IN_LOOP.splitlines(keepends=True)
    lines[line - 1] = lines[line - 1].rstrip("\n") + "  # noqa: JAX2\n"
    source = "".join(lines)
    result = analyze(source, "m.py", Config(), fix=True)
    assert result.findings == [] and result.fixed_source is None


def test_unselected_codes_and_strings_are_left_alone():
    source = 'x = 1  # noqa: JAX101\ns = "# noqa: JAX201"\n'
    assert analyze(source, "m.py", Config(select=("JAX2", "JAX001"))).findings == []
