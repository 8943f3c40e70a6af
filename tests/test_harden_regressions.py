"""Crashes and broken properties found by the fuzz tests (tests/fuzz), minimised."""

from __future__ import annotations

from jaxfix.engine import analyze
from jaxfix.engine.config import Config


def test_fix_in_a_crlf_file_writes_no_lone_lf():
    # Found by test_all_rules_together (long profile). JAX301 rebuilt the statement from text
    # ending in "\n" around the file's own "\r\n" continuation; libcst kept that newline as an
    # explicit LF, so the fixed file mixed line endings. Fixed in RuleContext.rewrite.
    source = (
        "import jax\n\n\n@jax.jit\ndef f(x):\n    val = x\n    if x[0] > 0:\n"
        "        val = (val\n            + 1.0)\n    return val\n"
    ).replace("\n", "\r\n")
    result = analyze(source, "m.py", Config(), fix=True)
    assert [f.code for f in result.findings] == ["JAX301"] and result.error is None
    fixed = result.fixed_source
    assert fixed is not None and "where(" in fixed
    assert fixed.count("\n") == fixed.count("\r\n")


def test_mixed_newline_file_is_left_as_it_is_outside_the_fix():
    # A file that already mixes line endings: no normalisation of the fix (which ending would be right?)
    source = "import jax\r\n\n\n@jax.jit\ndef f(x):\n    val = x\n    if x[0] > 0:\n        val = val + 1.0\n    return val\n"
    fixed = analyze(source, "m.py", Config(), fix=True).fixed_source
    assert fixed is not None and fixed.startswith("import jax\r\n\n\n@jax.jit\n")
