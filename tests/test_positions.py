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


def test_positions_of_a_text_check_equal_whole_module_positions():
    """A text `check` (no edits built) renders a statement only up to the first node asked about,
    then whole for the next one: every node still gets libcst's position, asked in any order."""
    for source in (SOURCE, SOURCE.replace("\n", "\r\n"), SOURCE.rstrip("\n")):
        for order in (1, -1):
            ctx = RuleContext(source, "x.py", edits=False)
            expected = MetadataWrapper(ctx.module, unsafe_skip_copy=True).resolve(PositionProvider)
            nodes = [node for node in expected if ctx.top_level_statement(node) is not None]
            assert len(nodes) > 100
            for node in nodes[::order]:
                assert ctx.position(node) == expected[node], (type(node).__name__, expected[node])


def test_positions_up_to_a_node_equal_the_whole_rendering_for_every_fixture():
    """`render.Positions.up_to(module, node)`, the rendering stopped after `node`, gives `node`,
    every node under it and every node rendered whole before it the whole rendering's position,
    and holds no other node (those still open around `node`, those after it)."""
    from pathlib import Path

    import libcst as cst

    from jaxfix.analysis import render
    from jaxfix.analysis.walk import TreeIndex

    root = Path(__file__).resolve().parent.parent
    compared = 0
    for path in sorted((root / "fixtures").rglob("*.py"))[::3]:
        try:
            module = cst.parse_module(path.read_text())
        except cst.ParserSyntaxError:
            continue
        whole = render.positions(module)
        index = TreeIndex(module)
        order = index._order  # noqa: SLF001 - every node, in source order
        for at, node in list(enumerate(order))[::7]:
            partial = render.Positions.up_to(module, node)
            assert partial[node] == whole[node], (path.name, type(node).__name__)
            for child in node.children[:3]:
                assert partial[child] == whole[child], (path.name, type(child).__name__)
            open_around = set()
            up = index.parents.get(node)
            while up is not None:
                open_around.add(id(up))
                up = index.parents.get(up)
            for other in order[: at + 1 : 5]:  # before `node` in source order: whole unless around it
                if id(other) in open_around:
                    assert other not in partial, (path.name, type(other).__name__)
                elif other in whole:
                    assert partial[other] == whole[other], (path.name, type(other).__name__)
            compared += 1
    assert compared > 1000


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


def test_render_counts_newlines_per_token_as_libcst_does():
    """`render.positions` derives lines and columns from the tokens after rendering: old Mac
    newlines, mixed ones inside strings and brackets, and a built module whose carriage return
    ends one token and whose line feed starts the next (two newlines to libcst, one `\\r\\n`
    in the joined text) give libcst's positions."""
    import libcst as cst

    from jaxfix.analysis import render

    split = cst.Module(
        body=[
            cst.SimpleStatementLine(
                [cst.Expr(cst.Name("a"))], trailing_whitespace=cst.TrailingWhitespace(newline=cst.Newline("\r"))
            ),
            cst.SimpleStatementLine([cst.Expr(cst.Name("b"))], leading_lines=[cst.EmptyLine(newline=cst.Newline("\n"))]),
        ]
    )
    mixed = "x = 1\r\ny = (2,\r 3)\nz = '''a\r\nb\rc'''\r\n\r\n# c\r\nw = 4"
    for module in (cst.parse_module(SOURCE.replace("\n", "\r")), cst.parse_module(mixed), split):
        expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        found = render.positions(module)
        assert len(found) == len(expected)
        assert all(found[node] == where for node, where in expected.items())
    assert render.positions(split)[split.body[1]].start.line == 3


def _rendered_spans(module, source):
    """Each top-level statement's offsets, measured by rendering it (what `top_spans` saves)."""
    from jaxfix.analysis import render

    offset = sum(len(render.code_of(module, line)) for line in module.header)
    spans = {}
    for statement in module.body:
        text = render.code_of(module, statement)
        assert source[offset : offset + len(text)] == text
        spans[statement] = (offset, offset + len(text))
        offset += len(text)
    return spans


DECORATED_AND_FOOTERS = '''\
# header

import jax
@jax.jit
# between decorators
@other
def f(x):
    return x
    # kept by the block


# before g
async def g(): pass
a = 1; b = 2
class C:
    x = 1
  # a comment at another depth
# footer
'''


def test_spans_read_from_lines_equal_the_rendered_spans():
    """`top_spans.spans_from_lines` gives each top-level statement the offsets rendering it
    measures, or None (the caller then renders): on every fixture and on decorators, comment
    lines a block keeps, statements sharing a line and a header and footer."""
    import ast
    from pathlib import Path

    import libcst as cst

    from jaxfix.analysis.top_spans import spans_from_lines

    root = Path(__file__).resolve().parent.parent
    sources = [SOURCE, DECORATED_AND_FOOTERS, SOURCE.replace("\n", "\r\n"), SOURCE.rstrip("\n")]
    sources += [p.read_text() for p in sorted((root / "fixtures").rglob("*.py"))]
    read = 0
    for source in sources:
        try:
            module, tree = cst.parse_module(source), ast.parse(source)
        except (cst.ParserSyntaxError, SyntaxError):
            continue
        found = spans_from_lines(module, source, tree)
        if found is not None:
            assert found == _rendered_spans(module, source)
            read += 1
    assert spans_from_lines(*(lambda s: (cst.parse_module(s), s, ast.parse(s)))(DECORATED_AND_FOOTERS)) is not None
    assert spans_from_lines(*(lambda s: (cst.parse_module(s), s, ast.parse(s)))(SOURCE.replace("\n", "\r\n"))) is None
    assert read > 50
