"""The language server's incremental analysis gives exactly what a full analysis gives.

Every fixture text (inputs, expected outputs, negatives) is opened, edited in each of the ways
`incremental_support` knows (statements deleted, duplicated, swapped, renamed, lines inserted,
imports added inside functions, ...) and edited back; after every step the result must equal
`engine.analyze` on the same text, fixes and their offsets included. `JAXFIX_FUZZ=long` runs
every edit at every statement instead of a spread of them; the fuzz suite adds generated
programs (tests/fuzz/fuzz_support.py). The quick set edits the first texts of each fixture family
and sweeps the hand-written texts with a spread of edits; `--long` edits every fixture text and
sweeps every edit at every statement of the hand-written ones."""

from __future__ import annotations

import ast
import os
from pathlib import Path

import libcst as cst
import pytest
from fixture_cases import discover_cases
from incremental_support import KINDS, differences
from long_support import quick_and_long

from jaxfix.analysis.chunks import (
    ChunkNames,
    chunk_names,
    components,
    default_indent,
    split_chunks,
)
from jaxfix.engine import analyze
from jaxfix.engine.config import Config
from jaxfix.engine.incremental import IncrementalAnalyzer
from jaxfix.engine.incremental_plan import placeholder_text

TEXTS = sorted({p for c in discover_cases() for p in (c.input, c.expected)})
LIMIT = None if os.environ.get("JAXFIX_FUZZ") == "long" else len(KINDS)


@pytest.mark.parametrize(
    "path", quick_and_long(TEXTS, group=lambda p: p.parent.name, keep=3), ids=lambda p: f"{p.parent.name}/{p.name}"
)
def test_same_findings_as_a_full_analysis_under_edits(path: Path):
    assert differences(path.read_text(encoding="utf-8"), limit=LIMIT) == []


FILLER = '''def helper_{i}(x, scale={i}):
    y = jnp.tanh(x) * scale
    for _ in range(3):
        y = y + jnp.sin(y)
    return jnp.sum(y ** 2)


'''

BAD = '''@jax.jit
def clip(x):
    if x > 0:
        return x
    return -x


def train(xs, lr):
    out = []
    for x in xs:
        step = jax.jit(lambda v: v * lr)
        out.append(step(x))
    return out


'''


def _module(fillers: int) -> str:
    header = "import jax\nimport jax.numpy as jnp\n\n\n"
    return header + BAD + "".join(FILLER.format(i=i) for i in range(fillers))


def test_an_edit_inside_one_function_analyses_only_its_group_and_the_next():
    text = _module(30)
    config = Config()
    analyzer = IncrementalAnalyzer()
    first = analyzer.analyze(text, "m.py", config)
    assert {f.code for f in first.findings} >= {"JAX301", "JAX201"}
    # opened: the rules run on the two groups that may hold findings; the stdlib screens clear the rest
    assert (analyzer.stats.analysed, analyzer.stats.screened, analyzer.stats.whole_text) == (2, 30, False)
    assert first.findings == analyze(text, "m.py", config).findings
    edited = text.replace("    y = jnp.tanh(x) * scale\n", "    y = jnp.tanh(x) * scale + 1\n", 1)
    again = analyzer.analyze(edited, "m.py", config)
    assert not analyzer.stats.whole_text
    # the edited function, and the next one (its key holds the statement before it): both screened
    assert (analyzer.stats.analysed, analyzer.stats.screened, analyzer.stats.groups) == (0, 2, 32)
    assert again.findings == analyze(edited, "m.py", config).findings
    flagged = edited.replace("    for x in xs:\n", "    for x in xs[:5]:\n", 1)  # an edit in `train`
    assert analyzer.analyze(flagged, "m.py", config).findings == analyze(flagged, "m.py", config).findings
    assert (analyzer.stats.analysed, analyzer.stats.screened) == (1, 1)  # `train`; the helper after it


def test_unchanged_text_reuses_everything_and_findings_move_with_their_statements():
    text = "import jax\nimport jax.numpy as jnp\n\n\n" + "".join(FILLER.format(i=i) for i in range(5)) + BAD
    config = Config()
    analyzer = IncrementalAnalyzer()
    first = analyzer.analyze(text, "m.py", config)
    analyzer.analyze(text, "m.py", config)
    assert analyzer.stats.analysed == 0
    longer = text.replace("    y = jnp.tanh(x) * scale\n", "    y = jnp.tanh(x) * scale\n    y = y + 1\n\n", 1)
    moved = analyzer.analyze(longer, "m.py", config)
    assert analyzer.stats.screened == 2  # helper_0 and helper_1 after it; the findings below are kept
    assert analyzer.stats.analysed == 0
    assert [f.line for f in moved.findings] == [f.line + 2 for f in first.findings]
    assert moved.findings == analyze(longer, "m.py", config).findings


NOQA = '''"""Module docstring.

# noqa: JAX301 inside a string is not a comment
"""
import jax
import jax.numpy as jnp


@jax.jit
def clip(x):
    if x > 0:  # noqa: JAX301
        return x
    return -x


def helper(x):  # noqa: JAX201
    note = """
    y = x  # noqa: JAX202
    """
    return jnp.sin(x), note
# noqa: JAX401 at the end
'''


def test_noqa_comments_read_chunk_by_chunk_match_the_whole_text():
    assert differences(NOQA, limit=len(KINDS)) == []
    assert differences(NOQA.replace("\n", "\r\n"), limit=len(KINDS)) == []


@pytest.mark.long
def test_noqa_comments_read_chunk_by_chunk_match_the_whole_text_under_every_edit():
    assert differences(NOQA, limit=None) == []


TIMED = """import time

import jax
import jax.numpy as jnp


@jax.jit
def f(x):
    return x * 2


x = jnp.ones(3)
t0 = time.perf_counter()
y = f(x)
w = 1
print(time.perf_counter() - t0)
"""


@pytest.mark.parametrize(
    "before, after",
    [
        (TIMED, TIMED.replace("y = f(x)\n", "y = f(x).block_until_ready()\n")),
        (TIMED.replace("y = f(x)\n", "y = f(x).block_until_ready()\n"), TIMED),
    ],
)
def test_module_level_code_is_one_sequence(before, after):
    # `y = f(x)` and the timed region's `print` share no name, yet JAX501 at the print depends on it.
    config = Config(select=("ALL",))
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(before, "m.py", config)
    assert analyzer.analyze(after, "m.py", config).findings == analyze(after, "m.py", config).findings


def test_a_syntax_error_is_reported_and_the_next_good_text_is_analysed():
    config = Config()
    analyzer = IncrementalAnalyzer()
    text = _module(2)
    analyzer.analyze(text, "m.py", config)
    broken = analyzer.analyze(text.replace("def clip(x):", "def clip(x:"), "m.py", config)
    assert analyzer.parse_error is not None and broken.error == analyzer.parse_error and not broken.findings
    assert analyzer.analyze(text, "m.py", config).findings == analyze(text, "m.py", config).findings
    assert analyzer.parse_error is None


def test_a_new_config_starts_over():
    text = _module(2)
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(text, "m.py", Config())
    narrowed = Config(select=("JAX2",))
    result = analyzer.analyze(text, "m.py", narrowed)
    # nothing reused: every group is analysed again or screened again
    assert analyzer.stats.analysed + analyzer.stats.screened == analyzer.stats.groups
    assert {f.code for f in result.findings} == {"JAX201"}


# -- chunks and the names that link them --------------------------------------------------


def _groups(text: str) -> list[list[str]]:
    tree = ast.parse(text)
    chunks = split_chunks(text, tree)
    names = [chunk_names(c.text) for c in chunks]
    return [[chunks[i].text.strip().splitlines()[-1].strip() for i in group] for group in components(names)]


def test_chunks_tile_the_text_with_their_leading_comments():
    text = "# header\nimport jax\n\n\n# about f\n@jax.jit\ndef f(x):\n    return x\nx = 1; y = 2\n# trailing\n"
    chunks = split_chunks(text, ast.parse(text))
    assert "".join(c.text for c in chunks) + "# trailing\n" == text
    assert [(c.line, c.first_line, c.last_line) for c in chunks] == [(1, 2, 2), (3, 6, 8), (9, 9, 9)]
    assert text[chunks[1].code_start :].startswith("@jax.jit")


@pytest.mark.parametrize(
    "text, groups",
    [
        # locals of a function never link it, module names do
        ("def f(x):\n    y = x\n    return y\ny = 1\ndef g():\n    return y\n", [["return y"], ["y = 1", "return y"]]),
        # a call links the caller to the callee; an attribute read links to the class defining it
        ("def f():\n    return 1\ndef g():\n    return f()\n", [["return 1", "return f()"]]),
        (
            "class A:\n    def m(self):\n        return 1\nclass B:\n    def m(self):\n        return 2\n"
            "def g(o):\n    return o.m()\n",
            [["return 1", "return 2", "return o.m()"]],
        ),
        # two classes defining a method nobody reads stay apart
        ("class A:\n    def m(self):\n        return 1\nclass B:\n    def m(self):\n        return 2\n", [["return 1"], ["return 2"]]),
        # calling a parameter may run any class's `__call__`
        (
            "class M:\n    def __call__(self, x):\n        return x\ndef apply(model, x):\n    return model(x)\n"
            "def other(x):\n    return abs(x)\n",
            [["return x", "return model(x)"], ["return abs(x)"]],
        ),
        # an import inside a function binds its name for the whole module
        (
            "def f():\n    import numpy as jnp\n    return jnp\ndef g(x):\n    return jnp.sum(x)\n",
            [["return jnp", "return jnp.sum(x)"]],
        ),
        # imports link nothing
        ("import jax\ndef f(x):\n    return jax.jit(x)\ndef g(x):\n    return jax.grad(x)\n", [["return jax.jit(x)"], ["return jax.grad(x)"]]),
        # a name bound in a comprehension or a lambda is its own
        ("z = 1\ndef f(xs):\n    return [z for z in xs]\ng = lambda z: z\n", [["z = 1"], ["return [z for z in xs]"], ["g = lambda z: z"]]),
        # `global` binds the module name
        ("def f():\n    global n\n    n = 1\ndef g():\n    return n\n", [["n = 1", "return n"]]),
    ],
)
def test_chunks_link_through_names(text, groups):
    assert _groups(text) == groups


def test_import_only_chunks_are_marked():
    names = chunk_names("try:\n    import jax\nexcept ImportError:\n    pass\n")
    assert isinstance(names, ChunkNames) and names.imports_only
    assert not chunk_names("import jax\nx = 1\n").imports_only


@pytest.mark.parametrize("path", TEXTS[::7], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_default_indent_matches_libcst(path: Path):
    text = path.read_text(encoding="utf-8")
    assert default_indent(text, ast.parse(text)) == cst.parse_module(text).default_indent


@pytest.mark.parametrize(
    "text",
    [
        "if x: pass\nelse:\n  y\n",
        "if x: pass\nelif y:\n\tz\n",
        "try: x\nexcept E:\n   y\n",
        "match x:\n  case 1:\n    pass\n",
        "class A:\n\n  # c\n  @d\n  def f(self): pass\n",
        "x = 1\n",
        "def f(\n  a,\n): return 1\nif a:\n     b\n",
    ],
)
def test_default_indent_matches_libcst_on_odd_layouts(text):
    assert default_indent(text, ast.parse(text)) == cst.parse_module(text).default_indent


@pytest.mark.parametrize(
    "text",
    ["x = 1\n", "def f():\n    return 1\n", "x = (\n  1)\r\n", "f()", 'a = """\r\nb\rc"""\n', "@d\ndef f(): pass", "f(\n\n  1\n)\n"],
)
@pytest.mark.parametrize("first", [False, True])
def test_placeholder_keeps_lines_and_length_and_parses(text, first):
    placeholder = placeholder_text(text, first)
    assert len(placeholder) == len(text)
    assert [c for c in placeholder if c in "\r\n"] == [c for c in text if c in "\r\n"]
    body = ast.parse(placeholder).body
    assert len(body) == 1 and isinstance(body[0], ast.Expr)
    # never a string as the module's first statement: that would be its docstring
    assert not (first and isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str))


# -- a module assembled from chunks parsed alone -------------------------------------------


def _plan(text: str):
    from jaxfix.engine.incremental_plan import Memo, Plan

    return Plan(text, ast.parse(text), Memo())


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_assembled_module_is_the_parsed_module(path: Path):
    text = path.read_text(encoding="utf-8")
    plan = _plan(text)
    whole = plan.module(text, set(range(len(plan.chunks))))
    assert whole.code == text
    assert whole.deep_equals(cst.parse_module(text))
    # and with every other chunk a placeholder, as a reduced text is
    keep = set(range(0, len(plan.chunks), 2))
    pieces, cursor = [], 0
    for i, chunk in enumerate(plan.chunks):
        if i not in keep:
            pieces += [text[cursor : chunk.code_start], plan.placeholder(i)]
            cursor = chunk.end
    reduced = "".join(pieces) + text[cursor:]
    assembled = plan.module(reduced, keep)
    assert assembled.code == reduced
    assert assembled.deep_equals(cst.parse_module(reduced, cst.PartialParserConfig(default_indent=plan.indent)))


@pytest.mark.parametrize("path", TEXTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_text_parsed_in_chunks_is_the_parsed_module(path: Path):
    """`parse_in_chunks` (how `check` parses a large file) gives `cst.parse_module`'s module, or
    None where a chunk is refused."""
    from jaxfix.engine.chunkparse import parse_in_chunks

    text = path.read_text(encoding="utf-8")
    module = parse_in_chunks(text, ast.parse(text))
    if module is not None:
        whole = cst.parse_module(text)
        assert module.code == text and module.deep_equals(whole)
        assert (module.default_indent, module.default_newline) == (whole.default_indent, whole.default_newline)


@pytest.mark.parametrize(
    "text",
    [
        "# header\n\n# more\nimport jax\n\n\n# about f\ndef f():\n    return 1\n\n# end\n\n",
        "x = 1\r\ny = 2\r\n",
        "def f():\n\treturn 1\n\n\nclass A:\n\tpass\n",
        "x = 1",
        "def f():\n    return 1\n    # indented, the block's\n\nx = 2\n",
        "if a:\n  b = 1\n# trailing\n   # indented trailing\n",
        # a chunk whose own first newline or block indent is not the module's
        "x = 1\r\n\ndef f():\r\n    pass\r\n",
        "x = 1\n\ndef f():\r\n    return 1\r\n",
        "def f():\n    return 1\n\ndef g():\n  return 2\n",
        "def f():\n\treturn 1\n\nx = 2\n",
        "x = 1\r\n\n# end\r\n",
    ],
)
def test_assembled_module_on_odd_layouts(text):
    plan = _plan(text)
    module = plan.module(text, set(range(len(plan.chunks))))
    assert module.code == text and module.deep_equals(cst.parse_module(text))


def test_a_line_of_another_newline_in_a_crlf_module_is_kept():
    """An editor pasting LF lines into a CRLF file: the pasted chunk's fix edits match a full
    analysis (a chunk parsed alone once stored its LF as the module's CRLF)."""
    text = (
        "import jax\r\nimport jax.numpy as jnp\r\n\r\n\r\ndef scale(v, k):\r\n    return v * k\r\n"
        "\ndef loop(x, y):\r\n    out = jnp.zeros_like(x)\r\n    for k in range(3):\r\n"
        "        out = out + jax.jit(lambda v: v * 2.0 + y)(x)\r\n    return out\r\n"
    )
    config = Config(select=("JAX2",), unsafe_fixes=True)
    assert differences(text, path="m.py", config=config) == []
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(text.replace("range(3)", "range(4)"), "m.py", config)
    assert analyzer.analyze(text, "m.py", config).findings == analyze(text, "m.py", config).findings
    assert analyzer.stats.analysed < analyzer.stats.groups


# The module's first block uses four spaces, the function below it two.
REINDENTED = (
    "import jax\n\n\nOFFSET = 1\n\n\ndef first(x):\n    return x + 1\n\n\nSCALE = 2\n\n\n"
    "@jax.jit\ndef count(x, n):\n  i = 0\n  while i < n:\n    x = x * 2.0\n    i = i + 1\n  return x\n"
)


def test_a_reduced_text_indenting_otherwise_falls_back_to_the_whole_text():
    """The module's first block uses four spaces, the edited function two: a reduced text without
    the first block would give generated code (a `while` turned into loop functions) two."""
    text = REINDENTED
    config = Config(select=("JAX3",), unsafe_fixes=True)
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(text, "m.py", config)
    edited = text.replace("x * 2.0", "x * 3.0")
    got = analyzer.analyze(edited, "m.py", config)
    assert got.findings and got.findings == analyze(edited, "m.py", config).findings
    assert analyzer.stats.whole_text
    assert differences(REINDENTED, path="m.py", config=config, limit=len(KINDS)) == []


@pytest.mark.long
def test_a_reduced_text_indenting_otherwise_matches_under_every_edit():
    config = Config(select=("JAX3",), unsafe_fixes=True)
    assert differences(REINDENTED, path="m.py", config=config) == []


# -- what the editor's first analysis and its edits may and may not skip (issue #21) -------------

TWICE = '''import jax


def run(x, n):
    for i in range(n):
        x = jax.jit(lambda v: v * 2)(x)
    return x


import jax


def run(x, n):
    for i in range(n):
        x = jax.jit(lambda v: v * 2)(x)
    return x


def helper(x):
    return x + 1
'''


def test_repeated_statements_each_keep_their_own_findings():
    """Equal chunk texts are parsed once; each place must still get its own nodes, or both copies'
    findings land on the second (found by benchmarks/lsp_latency.py, whose module repeats examples)."""
    config = Config(unsafe_fixes=True)
    analyzer = IncrementalAnalyzer()
    got = analyzer.analyze(TWICE, "m.py", config).findings
    assert got == analyze(TWICE, "m.py", config).findings and len({f.line for f in got}) == 2
    edited = TWICE.replace("return x + 1", "return x + 2")
    assert analyzer.analyze(edited, "m.py", config).findings == analyze(edited, "m.py", config).findings
    assert analyzer.stats.analysed == 0  # the hoists after the second `import jax` are reused
    assert differences(TWICE, path="m.py", config=config) == []


def _quoted(far: str, near: str) -> str:
    far_lines = "".join(f"NAME_{i} = {far}a{i}{far}\n\n\n" for i in range(6))
    return (
        "import jax\nimport jax.numpy as jnp\n\n\n" + far_lines
        + f"A = {near}b{near}; B = {near}c{near}; C = {near}d{near}\n\n\n"
        + "def run(xs, sizes):\n    out = []\n    for n in sizes:\n"
        + "        out.append(jax.jit(lambda v: jnp.reshape(v, (n, -1)))(xs))\n    return out\n"
    )


def test_string_literals_a_fix_writes_take_the_whole_files_quotes():
    """The reduced text holds the single-quoted statement before `run`, the whole text more
    double-quoted ones: `static_argnames=("n",)` either way, and again after the far ones change."""
    config = Config(unsafe_fixes=True)
    text = _quoted('"', "'")
    analyzer = IncrementalAnalyzer()
    got = analyzer.analyze(text, "m.py", config).findings
    assert not analyzer.stats.whole_text and got == analyze(text, "m.py", config).findings
    assert any('("n",)' in e.text for f in got for e in f.fix.edits)
    flipped = text.replace('"', "'")
    got = analyzer.analyze(flipped, "m.py", config).findings
    assert got == analyze(flipped, "m.py", config).findings
    assert any("('n',)" in e.text for f in got for e in f.fix.edits)


def test_an_import_beside_other_code_is_seen_by_every_reduced_text():
    """`import functools; _x = 0` is no import-only chunk, and no group reads `functools`; a fix
    that spells `functools.partial` must still see it (and request no second import)."""
    text = (
        "import functools; _x = 0\n\nimport jax\nimport jax.numpy as jnp\n\n\n"
        "@jax.jit\ndef activate(x, mode: str):\n    if mode == 'relu':\n        return jnp.maximum(x, 0.0)\n"
        "    return jnp.tanh(x)\n\n\ndef run(x):\n    return activate(x, 'relu')\n\n\ndef other(y):\n    return y\n"
    )
    config = Config()
    analyzer = IncrementalAnalyzer()
    got = analyzer.analyze(text, "m.py", config).findings
    assert got == analyze(text, "m.py", config).findings
    assert got and all(not f.fix.imports for f in got if f.fix is not None)
    assert differences(text, path="m.py", config=config) == []


@pytest.mark.parametrize("path", TEXTS[::7], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_an_edit_spliced_into_the_last_tree_gives_the_parsed_tree(path: Path):
    """An edit inside one statement reuses the last stdlib tree with that statement parsed alone;
    the result is the tree `ast.parse` gives the whole text, positions included."""
    from incremental_support import mutations

    text = path.read_text(encoding="utf-8")
    typed = text.replace("return ", "return 0 + ", 1)
    spliced = 0
    for label, new in [*mutations(text, LIMIT), ("typed", typed)]:
        analyzer = IncrementalAnalyzer()
        analyzer.analyze(text, "m.py", Config())
        tree = analyzer._spliced(new)
        if tree is None:
            continue
        spliced += 1
        assert ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(new), include_attributes=True), label
    assert spliced or "return " not in text


def test_an_edit_that_breaks_the_statement_is_reported_from_the_whole_text():
    text = _module(3)
    analyzer = IncrementalAnalyzer()
    analyzer.analyze(text, "m.py", Config())
    for broken in (text.replace("    if x > 0:", "    if x > (0:"), text.replace("@jax.jit\ndef clip", "@jax.jit\nclip")):
        result = analyzer.analyze(broken, "m.py", Config())
        assert result.error == analyze(broken, "m.py", Config()).error is not None
