"""Finding positions come from each top-level statement rendered alone: they must equal
libcst's positions for the whole module, for every node."""

from __future__ import annotations

from libcst.metadata import MetadataWrapper, PositionProvider

from jaxfix.rulebase import RuleContext

SOURCE = '''\
#!/usr/bin/env python
# a header comment
"""Docstring."""
import jax


# comment before f
@jax.jit
def f(x):  # trailing
    if x > 0:
        return x; y = 1
    return -x

x = [
    1,
    2,
]; z = 3
class C:

    a = 1
# footer comment
'''


def test_positions_of_every_node_equal_whole_module_positions():
    for source in (SOURCE, SOURCE.replace("\n", "\r\n"), SOURCE.rstrip("\n")):
        ctx = RuleContext(source, "x.py")
        expected = MetadataWrapper(ctx.module, unsafe_skip_copy=True).resolve(PositionProvider)
        checked = 0
        for node, where in expected.items():
            if ctx.top_level_statement(node) is None:
                continue
            assert ctx.position(node) == where, (type(node).__name__, where)
            checked += 1
        assert checked > 100


def test_render_gives_libcst_positions_and_text_for_every_fixture():
    """`render.positions` and `render.code_of` are libcst's `PositionProvider` and
    `code_for_node` at less cost: the same positions for every node, the same text."""
    from pathlib import Path

    import libcst as cst

    from jaxfix.analysis import render

    root = Path(__file__).resolve().parent.parent
    sources = [SOURCE, SOURCE.replace("\n", "\r\n"), SOURCE.rstrip("\n")]
    sources += [p.read_text() for p in sorted((root / "fixtures").rglob("*.py"))]
    compared = 0
    for source in sources:
        try:
            module = cst.parse_module(source)
        except cst.ParserSyntaxError:
            continue
        expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        found = render.positions(module)
        assert len(found) == len(expected)
        assert all(found[node] == where for node, where in expected.items())
        assert render.code_of(module, module) == module.code
        for statement in module.body:
            assert render.code_of(module, statement) == module.code_for_node(statement)
        compared += 1
    assert compared > 50
