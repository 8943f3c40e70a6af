"""`cstparse.parse_module` gives libcst's own tree, without validating each parsed node, and leaves
libcst's validation of hand-built nodes on."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest

from jaxfix.analysis.cstparse import SMALL_TEXT, parse_module

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize(
    "path",
    [ROOT / "jaxfix" / "analysis" / "jit_contexts.py", ROOT / "codemods" / "traced_control_flow" / "traced_if.py"],
    ids=lambda p: p.name,
)
def test_parse_gives_libcsts_tree(path):
    text = path.read_text(encoding="utf-8")
    assert len(text) > SMALL_TEXT  # the helper thread's path
    assert parse_module(text).deep_equals(cst.parse_module(text))
    small = "@jax.jit\ndef f(x, *, n: int = 2):\n    if x.sum() > 0:  # why\n        x = -x\n    return x ** n\n"
    assert len(small) < SMALL_TEXT  # parsed in the calling thread
    assert parse_module(small).deep_equals(cst.parse_module(small))


def test_hand_built_nodes_are_still_validated_after_a_parse_and_after_a_failed_one():
    parse_module("x = 1\n")
    with pytest.raises(cst.ParserSyntaxError):
        parse_module("def (:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("not a name")
