"""`astscan.walked_statements` lists the statements (with `except` handlers and `match` cases) of
a tree in the order `ast.walk` yields them: the questions that keep `ast.walk`'s order (the last
binding of a name wins, `bound_jits.factory_bound_parts`) read it instead of walking every
expression. Real texts: jaxfix's own modules, the fixtures, and a text of every block kind."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from jaxfix.analysis import astscan

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = """\
x = 1
try:
    a = 1
except* ValueError:
    b = 2
else:
    c = 3
finally:
    d = 4
for i in y:
    if i:
        e = 5
    else:
        f = 6
else:
    while g:
        with h:
            def k():
                class C:
                    m = lambda: 0
                return 1
match x:
    case 1 if z:
        n = 7
    case _:
        try:
            o = 8
        except (TypeError, KeyError) as err:
            p = 9
"""
_HOLDERS = (ast.stmt, ast.ExceptHandler, ast.match_case)


def _texts() -> list[tuple[str, str]]:
    paths = sorted((ROOT / "jaxfix" / "analysis").glob("*.py"))[:20] + sorted((ROOT / "fixtures").rglob("*.in.py"))[:40]
    return [("blocks", BLOCKS), *((p.name, p.read_text(encoding="utf-8")) for p in paths)]


@pytest.mark.parametrize("name,text", _texts(), ids=lambda v: v if "\n" not in v else "")
def test_walked_statements_are_ast_walks_statements_in_its_order(name, text):
    tree = ast.parse(text)
    for root in (tree, *tree.body):
        expected = [id(n) for n in ast.walk(root) if n is root or isinstance(n, _HOLDERS)]
        assert [id(n) for n in astscan.walked_statements(root)] == expected
