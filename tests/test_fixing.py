"""The fix loop's mechanics, exercised with small rules written for the purpose.

The real rules are exercised through the golden fixtures; these rules exist to
produce the awkward situations (overlapping fixes, a fix that breaks the code, a
fix that never converges) that good rules should never produce.
"""

import ast
import textwrap

import libcst as cst
import pytest

from jaxfix.engine.fixing import AnalysisError, fix_until_stable, scan
from jaxfix.model import Safety
from jaxfix.rulebase import Code, Rule


class RenameCalls(Rule):
    """Rename calls of `old_*` to `new_*`: the outer and inner call of `old_f(old_g(x))` overlap."""

    name = "rename-calls"
    codes = (Code("TST1", "rename-calls", "call to an old_ function"),)
    prefilter = ("old_",)

    def check(self, ctx):
        for node in _walk(ctx.module):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value.startswith("old_"):
                new = node.with_changes(func=cst.Name("new_" + node.func.value[4:]))
                yield ctx.finding(self, "TST1", node, "old call", ctx.rewrite("rename", Safety.SAFE, replace={node: new}))


class BreaksCode(Rule):
    """A buggy rule: its fix produces text that does not parse."""

    name = "breaks-code"
    codes = (Code("TST2", "breaks-code", "always wrong"),)
    prefilter = ("boom",)

    def check(self, ctx):
        from jaxfix.model import Edit, Fix

        stmt = ctx.module.body[0]
        yield ctx.finding(self, "TST2", stmt, "boom", Fix("break it", Safety.SAFE, (Edit(0, 0, "def (:\n"),)))


class NeverConverges(Rule):
    """A buggy rule: every fix re-creates its own finding."""

    name = "never-converges"
    codes = (Code("TST3", "never-converges", "grows forever"),)
    prefilter = ("grow",)

    def check(self, ctx):
        stmt = ctx.module.body[0]
        grown = cst.parse_statement("grow = 1\n")
        yield ctx.finding(self, "TST3", stmt, "grow", ctx.rewrite("grow", Safety.SAFE, insert_before={stmt: [grown]}))


class Restyles(Rule):
    """A rule whose finding outlives its fix with another fix, as a `while` given a static
    argument (an edit of the decorator line above it) and then rewritten to `lax.while_loop`
    would: `x = 1` first gets a `# static` comment on the line above it, then, still found, a rename. Two
    stacked fixes at one site (issue #33)."""

    name = "restyles"
    codes = (Code("TST4", "restyles", "a site with two fixes in turn"),)
    prefilter = ("x = 1",)

    def check(self, ctx):
        from jaxfix.model import Edit, Fix

        at = ctx.source.find("x = 1")
        if at == -1:
            return
        stmt = next(s for s in ctx.module.body if "x = 1" in ctx.module.code_for_node(s))
        if "# static" not in ctx.source:
            fix = Fix("mark it static", Safety.SAFE, (Edit(at - 1, at - 1, "  # static"),))
        else:
            fix = Fix("rename it", Safety.SAFE, (Edit(at, at + 1, "renamed"),))
        yield ctx.finding(self, "TST4", stmt, "x", fix)


def _walk(node):
    yield node
    for child in node.children:
        yield from _walk(child)


def run(source, rule, **kwargs):
    rescan = lambda text, tree=None: scan(text, "t.py", [rule], tree=tree)  # noqa: E731
    return fix_until_stable(source, rescan(source), rescan, **kwargs)


def test_overlapping_fixes_wait_for_the_next_round():
    outcome = run("y = old_f(old_g(1))\n", RenameCalls())
    assert outcome.text == "y = new_f(new_g(1))\n"
    assert outcome.rounds == 2 and len(outcome.applied) == 2 and outcome.error is None


def test_untouched_text_is_byte_identical():
    source = "# keep   this\r\nz = [1,2 ,3]\r\ny = old_f(1)\r\n"
    outcome = run(source, RenameCalls())
    assert outcome.text == "# keep   this\r\nz = [1,2 ,3]\r\ny = new_f(1)\r\n"


def test_fix_that_breaks_the_code_is_discarded_and_reported():
    outcome = run("boom = 1\n", BreaksCode())
    assert outcome.text == "boom = 1\n" and outcome.applied == []
    assert "does not parse" in outcome.error


def test_fix_loop_is_bounded():
    # four nested calls: each round renames the outermost one left, three rounds leave one
    outcome = run("y = old_a(old_b(old_c(old_d(1))))\n", RenameCalls(), max_rounds=3)
    assert outcome.rounds == 3 and "did not converge" in outcome.error
    assert outcome.text == "y = new_a(new_b(new_c(old_d(1))))\n"


def test_a_finding_its_fix_did_not_touch_is_not_fixed_again():
    """The re-created finding is on a site round 1 fixed without rewriting it: it waits for the
    next run instead of growing the file up to the round limit."""
    outcome = run("grow = 1\n", NeverConverges(), max_rounds=3)
    assert outcome.rounds == 1 and outcome.error is None
    assert outcome.text == "grow = 1\ngrow = 1\n" and [f.code for f in outcome.remaining] == ["TST3"]


def test_a_site_never_gets_two_stacked_fixes():
    """Before (issue #33), round 2 applied the rename on top of round 1's marker."""
    first = scan("y = 0\nx = 1\n", "t.py", [Restyles()])
    assert [(f.line, f.fix.title) for f in first.findings] == [(2, "mark it static")]  # what `check` shows
    outcome = run("y = 0\nx = 1\n", Restyles())
    assert outcome.text == "y = 0  # static\nx = 1\n"  # the fix `check` named, and only it
    assert [(f.line, f.fix.title) for f in outcome.applied] == [(2, "mark it static")]
    assert [f.fix.title for f in outcome.remaining] == ["rename it"]  # the next `check` shows it
    assert outcome.error is None
    # a second run is a new `check`: it applies the fix that one shows
    assert run(outcome.text, Restyles()).text == "y = 0  # static\nrenamed = 1\n"


def test_noqa_suppresses_by_code_and_prefix_and_bare():
    rule = RenameCalls()
    source = "a = old_f(1)  # noqa: TST1\nb = old_f(2)  # noqa: TST\nc = old_f(3)  # noqa\nd = old_f(4)  # noqa: JAX201\n"
    assert [f.line for f in scan(source, "t.py", [rule]).findings] == [4]


def test_prefilter_keeps_rules_from_libcst_but_syntax_errors_still_show():
    # No rule admits the text, so libcst never parses it; the stdlib parser still does, and a
    # syntax error is reported rather than passed over.
    assert scan("x = 1\n", "t.py", [RenameCalls()]).findings == []
    with pytest.raises(AnalysisError, match="syntax error at line 1"):
        scan("def f(:\n", "t.py", [RenameCalls()])


@pytest.mark.parametrize("text", ["nonlocal x\n", "def f(a):\n    global a\n", "def f(x, x):\n    pass\n"])
def test_syntax_check_without_a_tree_accepts_what_the_parser_accepts(text):
    # A text no rule admits is checked through the symbol table, which refuses these programs
    # (Python would at import); the parser accepts them, and so does a check, as with a tree.
    ast.parse(text)
    assert scan(text, "t.py", [RenameCalls()]).findings == []
    assert scan(text, "t.py", [RenameCalls()], tree=ast.parse(text)).findings == []


class FlagsOnEvidence(Rule):
    """A rule that reports `sure()` by default and `maybe()` only in preview mode."""

    name = "flags-on-evidence"
    codes = (Code("TST6", "flags-on-evidence", "a call"),)
    prefilter = ("sure", "maybe")

    def check(self, ctx):
        for node in _walk(ctx.module):
            if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("sure", "maybe"):
                fix = ctx.rewrite("rename", Safety.SAFE, replace={node.func: cst.Name("done")})
                yield ctx.finding(self, "TST6", node, "call", fix).in_preview(node.func.value == "maybe")


def test_preview_findings_are_kept_only_in_preview_mode():
    source = "sure()\nmaybe()\n"
    default = scan(source, "m.py", [FlagsOnEvidence()])
    assert [(f.line, f.preview) for f in default.findings] == [(1, False)]
    everything = scan(source, "m.py", [FlagsOnEvidence()], preview=True)
    assert [(f.line, f.preview) for f in everything.findings] == [(1, False), (2, True)]
    run = lambda text, tree=None: scan(text, "m.py", [FlagsOnEvidence()], tree=tree)  # noqa: E731
    assert fix_until_stable(source, run(source), run).text == "done()\nmaybe()\n"  # a hidden finding's fix is not applied


def test_a_noqa_for_a_preview_finding_is_not_unused():
    """Out of preview mode the finding is hidden, but its `# noqa` is not reported unused (whose
    safe fix would delete the comment a user wrote for it)."""
    import textwrap

    from jaxfix.engine import analyze
    from jaxfix.engine.config import Config

    # JAX202 on a function a loop over written-out values calls: preview (jit_placement/preview.py)
    source = textwrap.dedent(
        """\
        import jax
        import jax.numpy as jnp

        def scale(x, k):
            return jax.jit(lambda v: v * k)(x)  # noqa: JAX202

        xs = jnp.arange(3.0)
        for k in (0.5, 1.0, 2.0):
            scale(xs, k)
        """
    )
    assert analyze(source, "m.py", Config(select=("ALL",))).findings == []
    assert analyze(source.replace("  # noqa: JAX202", ""), "m.py", Config(select=("ALL",), preview=True)).findings
    assert analyze(source, "m.py", Config(select=("ALL",), preview=True)).findings == []


class OnlyInPreview(FlagsOnEvidence):
    """`FlagsOnEvidence` declared preview-only (`Rule.preview_only`), counting its runs."""

    name = "only-in-preview"
    preview_only = True
    runs = 0

    def check(self, ctx):
        type(self).runs += 1
        for finding in super().check(ctx):
            yield finding.in_preview()


def test_a_preview_only_rule_runs_only_where_its_findings_are_read():
    OnlyInPreview.runs = 0
    assert scan("sure()\n", "m.py", [OnlyInPreview()]).findings == []
    assert OnlyInPreview.runs == 0  # nothing would read them: not run
    assert [f.line for f in scan("sure()\n", "m.py", [OnlyInPreview()], preview=True).findings] == [1]
    assert OnlyInPreview.runs == 1


HISTORY = textwrap.dedent(
    """\
    import jax

    history = []


    @jax.jit
    def step(x):
        history.append(x)  # noqa: JAX404
        return x + 1
    """
)  # JAX404's first INVALID example: preview whatever its path (trace_time_semantics/preview.py)


def test_a_preview_only_rule_still_runs_for_the_noqa_its_findings_use():
    """JAX404 is preview-only; in a default check of a text with a `# noqa` it still runs, so that
    JAX001 sees its finding and does not call the comment unused (its fix would delete it)."""
    from jaxfix.engine import analyze
    from jaxfix.engine.config import Config
    from jaxfix.engine.fixing import preview_read
    from jaxfix.engine.pipeline import selected_rules

    rules = selected_rules(Config(select=("ALL",)), "m.py")
    assert preview_read(rules, HISTORY, False)
    assert not preview_read(rules, HISTORY.replace("  # noqa: JAX404", ""), False)
    assert analyze(HISTORY, "m.py", Config(select=("ALL",))).findings == []
    assert [f.code for f in analyze(HISTORY.replace("  # noqa: JAX404", ""), "m.py", Config(select=("ALL",), preview=True)).findings] == ["JAX404"]


def test_the_editor_analysis_keeps_preview_findings_once_a_noqa_appears():
    """The incremental analysis keeps each group's findings between texts: those of a text no
    `noqa` is in lack the preview-only rules' findings; once one is typed, JAX001 sees them."""
    from jaxfix.engine.config import Config
    from jaxfix.engine.incremental import IncrementalAnalyzer

    analyzer = IncrementalAnalyzer()
    config = Config(select=("ALL",))
    without = HISTORY.replace("  # noqa: JAX404", "")
    assert analyzer.analyze(without, "m.py", config).findings == []
    assert analyzer.analyze(HISTORY, "m.py", config).findings == []  # JAX001 saw the JAX404 finding


def test_every_finding_of_a_preview_only_rule_is_preview():
    """`Rule.preview_only` holds on the rules' own INVALID examples: a default check that does
    not run them loses nothing it would show."""
    from jaxfix.engine import registry

    only = [rule for rule in registry.all_rules() if rule.preview_only]
    assert {code.code for rule in only for code in rule.codes} == {"JAX305", "JAX402", "JAX404"}
    for rule in only:
        codes = {code.code for code in rule.codes}
        for example in rule.invalid:
            found = [f for f in scan(example.code, "m.py", [rule()], preview=True).findings if f.code in codes]
            assert found and all(f.preview for f in found), (rule.name, example.code)
