"""Unit tests of the LSP server's pure parts: positions, fix/noqa/fix-all edits.

The end-to-end tests (tests/test_lsp_e2e.py) run the real server over stdio;
these pin the conversions that are easy to get subtly wrong.
"""

from __future__ import annotations

import re

import pytest
from lsprotocol import types

from jaxfix.edits import apply_edits
from jaxfix.engine.imports import add_imports
from jaxfix.lsp.actions import fix_edits, noqa_edit
from jaxfix.lsp.positions import UTF8, UTF16, UTF32, LineIndex, units
from jaxfix.model import Edit, Finding, Fix, ImportRequest, Safety


def reference_offset(text: str, position: types.Position, encoding: str) -> int:
    """An independent implementation: encode the line and cut it at `character` units."""
    lines = re.split(r"(\r\n|\r|\n)", text)
    starts, offset = [], 0
    for i in range(0, len(lines), 2):
        starts.append(offset)
        offset += len(lines[i]) + (len(lines[i + 1]) if i + 1 < len(lines) else 0)
    line = lines[2 * position.line]
    codec, width = {UTF8: ("utf-8", 1), UTF16: ("utf-16-le", 2), UTF32: ("utf-32-le", 4)}[encoding]
    prefix = line.encode(codec)[: position.character * width].decode(codec)
    return starts[position.line] + len(prefix)


TEXT = 'a = "é"; b = f(1)\r\nc = "😀😀"; d = g(2)\rλ = 3\n\tx = "\U0001f600"  # ok\n'


@pytest.mark.parametrize("encoding", [UTF8, UTF16, UTF32])
def test_every_offset_round_trips_in_every_encoding(encoding):
    index = LineIndex(TEXT, encoding)
    for offset in range(len(TEXT) + 1):
        position = index.position_of_offset(offset)
        back = index.offset_of_position(position)
        if TEXT[offset - 1 : offset + 1] == "\r\n":
            assert back == offset - 1  # between \r and \n is the end of the line
            continue
        assert back == offset, (offset, position)
        assert reference_offset(TEXT, position, encoding) == offset


def test_astral_and_non_ascii_columns_per_encoding():
    # Line 2 (1-based), `d` is at code-point column 11: 'c = "😀😀"; d'
    line2 = TEXT.split("\r\n")[1].split("\r")[0]
    column = line2.index("d") + 1
    assert column == 11
    assert LineIndex(TEXT, UTF32).position_of(2, column) == types.Position(line=1, character=10)
    assert LineIndex(TEXT, UTF16).position_of(2, column) == types.Position(line=1, character=12)
    assert LineIndex(TEXT, UTF8).position_of(2, column) == types.Position(line=1, character=16)
    # Line 1: 'a = "é"; b' -> b at code point 9 (0-based); é is 2 bytes in UTF-8, 1 unit in UTF-16.
    assert LineIndex(TEXT, UTF16).position_of(1, 10) == types.Position(line=0, character=9)
    assert LineIndex(TEXT, UTF8).position_of(1, 10) == types.Position(line=0, character=10)
    # Greek lambda on line 3 after a lone \r.
    assert LineIndex(TEXT, UTF8).position_of(3, 2) == types.Position(line=2, character=2)
    assert units("😀", UTF16) == 2 and units("😀", UTF8) == 4 and units("😀", UTF32) == 1


def test_lines_split_like_lsp_not_like_splitlines():
    text = "a = 1\x0c\nb = '\u2028'\nc = 2\n"
    index = LineIndex(text, UTF16)
    assert index.line_count == 4  # three lines and the empty one after the final newline
    assert index.position_of(3, 1) == types.Position(line=2, character=0)
    assert text[index.offset_of_position(types.Position(line=2, character=0))] == "c"


def test_position_inside_a_surrogate_pair_rounds_to_the_end_of_the_character():
    index = LineIndex("x = '😀'\n", UTF16)
    # character 6 is between the two UTF-16 units of the emoji
    assert index.offset_of_position(types.Position(line=0, character=6)) == 6


def test_positions_past_the_end_clamp():
    index = LineIndex("ab\ncd", UTF16)
    assert index.offset_of_position(types.Position(line=0, character=99)) == 2
    assert index.offset_of_position(types.Position(line=7, character=0)) == 5
    assert index.position_of(9, 1) == types.Position(line=1, character=2)


def _finding(line: int, code: str = "JAX201") -> Finding:
    return Finding(code, "name", "m.py", line, 5, line, 9, "message")


def test_noqa_is_appended_and_keeps_the_file_parsing():
    source = "import jax\nf = jax.jit(g)\n"
    index = LineIndex(source, UTF16)
    edit = noqa_edit(source, _finding(2), index)
    assert apply_edits(source, [edit]) == "import jax\nf = jax.jit(g)  # noqa: JAX201\n"


def test_noqa_extends_an_existing_code_list_and_respects_comments():
    source = "f = jax.jit(g)  # noqa: JAX101\ny = h(x)  # why\n"
    index = LineIndex(source, UTF16)
    assert apply_edits(source, [noqa_edit(source, _finding(1), index)]).splitlines()[0] == (
        "f = jax.jit(g)  # noqa: JAX101, JAX201"
    )
    assert apply_edits(source, [noqa_edit(source, _finding(2), index)]).splitlines()[1] == (
        "y = h(x)  # why  # noqa: JAX201"
    )


def test_noqa_is_not_offered_where_a_comment_cannot_go():
    source = 'x = f("""a\nb""") + \\\n    1\nz = 1  # noqa\n'
    index = LineIndex(source, UTF16)
    assert noqa_edit(source, _finding(1), index) is None  # line ends inside a string
    assert noqa_edit(source, _finding(2), index) is None  # backslash continuation
    assert noqa_edit(source, _finding(4), index) is None  # a bare noqa already covers it


def test_noqa_keeps_crlf_line_endings():
    source = "a = 1\r\nf = jax.jit(g)\r\n"
    edit = noqa_edit(source, _finding(2), LineIndex(source, UTF16))
    assert apply_edits(source, [edit]) == "a = 1\r\nf = jax.jit(g)  # noqa: JAX201\r\n"


def test_fix_edits_keep_the_fix_and_add_imports_as_their_own_edits():
    source = "import numpy as np\n\n\ndef f(x):\n    return np.where(x > 0, x, 0)\n"
    start = source.index("np.where")
    fix = Fix(
        "use jnp.where",
        Safety.SAFE,
        edits=(Edit(start, start + len("np.where"), "jnp.where"),),
        imports=(ImportRequest("jax.numpy", alias="jnp"),),
    )
    edits = fix_edits(source, fix)
    expected = add_imports(apply_edits(source, fix.edits), fix.imports)
    assert apply_edits(source, edits) == expected
    assert fix.edits[0] in edits  # the rule's own edit is sent untouched
    assert len(edits) == 2
    assert all(e.end - e.start < len(source) // 2 for e in edits)  # never the whole document


def test_fix_edits_when_the_import_lands_next_to_a_fixed_line():
    source = "import os\nx = os.sep\n"
    start = source.index("os.sep")
    fix = Fix(
        "t",
        Safety.UNSAFE,
        edits=(Edit(start, len(source) - 1, "lax.cond"),),
        imports=(ImportRequest("jax", name="lax"),),
    )
    edits = fix_edits(source, fix)
    assert apply_edits(source, edits) == add_imports(apply_edits(source, fix.edits), fix.imports)
