"""`text_quote_counts` finds a text's string tokens with a regular expression: the same counts as
the tokenizer's STRING tokens (what it replaced) and as libcst's `quote_counts` of the parsed module."""

from __future__ import annotations

import io
import tokenize
from pathlib import Path

import libcst as cst
import pytest

from jaxfix.analysis.codegen import quote_counts, string_token_quotes, text_quote_counts

ROOT = Path(__file__).resolve().parent.parent


def tokenizer_counts(text: str) -> tuple[int, int] | None:
    """The counts as the tokenizer's STRING tokens give them (the implementation it replaced)."""
    single = double = 0
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.STRING:
                counted = string_token_quotes(token.string)
                single, double = single + counted[0], double + counted[1]
    except Exception:  # noqa: BLE001
        return None
    return single, double


SNIPPETS = [
    "x = 'a'\ny = \"b\"\n",
    "# it's a comment with \"quotes\"\nx = 'a'  # and 'more'\n",
    "s = 'has # no comment'\nt = \"it's\"\n",
    "d = '''doc 'with' \"quotes\"\n'''\ne = \"\"\"x\"\"\"\n",
    "r = r'\\'' + rb\"\\\"\" + Rb'x' + u'y' + B\"z\"\n",
    'f = f\'{x["k"]}\' + F"{y!r:>{w}}" + rf\'{z}\' + fR"a"\n',
    "if'a'in x:pass\nwhile\"b\"in y:break\n",
    "s = 'line \\\ncontinued'\n",
    "s = ('implicit' \"concatenation\"\n     'parts')\n",
    'x = a#comment\'\ny = "ok"\n',
    's = \'\\\\\'\nt = "\\\\\\""\n',
    "x = 1\r\ny = 'crlf'\r\n",
]


@pytest.mark.parametrize("text", SNIPPETS)
def test_snippets_count_as_the_tokenizer_and_libcst_do(text: str) -> None:
    compile(text, "<snippet>", "exec")  # every snippet is a program that parses
    assert text_quote_counts(text) == tokenizer_counts(text)
    assert text_quote_counts(text) == quote_counts(cst.parse_module(text))


def test_an_open_quote_is_none() -> None:
    assert text_quote_counts("x = 'open\n") is None


def test_this_repository_counts_as_the_tokenizer() -> None:
    files = sorted(p for folder in ("jaxfix", "codemods", "fixtures") for p in (ROOT / folder).rglob("*.py"))
    assert len(files) > 100
    for path in files:
        text = path.read_text(encoding="utf-8")
        try:
            compile(text, str(path), "exec")
        except (SyntaxError, ValueError):
            continue
        assert text_quote_counts(text) == tokenizer_counts(text), path
