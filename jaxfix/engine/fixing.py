"""Running rules on one text and applying their fixes until the text is stable.

This is the part of the engine that rules' own codemod commands reuse, so it
depends only on the rule interface, never on config discovery or the registry.
"""

from __future__ import annotations

import ast
import bisect
import re
import symtable
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from jaxfix.analysis.cstparse import parse_module
from jaxfix.edits import apply_edits
from jaxfix.engine import steps
from jaxfix.engine.chunkparse import parse_in_chunks
from jaxfix.engine.imports import apply_import_requests
from jaxfix.engine.linemap import LineMap
from jaxfix.engine.suppression import is_suppressed
from jaxfix.model import Finding, Safety
from jaxfix.rulebase import Rule, RuleContext

MAX_FIX_ROUNDS = 10


class AnalysisError(Exception):
    """The text cannot be analysed (syntax error, nesting too deep); the message is one line."""


@dataclass
class Scan:
    """Findings of one pass over one text."""

    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    # preview findings left out (not in preview mode, not suppressed) of rules that run in every
    # mode: computed anyway, so counted at no cost (`settle`); a preview-only rule's are not
    hidden_preview: int = 0


@dataclass
class RawScan:
    """What the ordinary rules found before other-findings rules and noqa had their say."""

    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    names_asked: set[str] = field(default_factory=set)  # fresh names the fixes considered
    undecided: bool = False  # a fresh name was spelled in code left out of the text (`elsewhere`)
    quote_used: str | None = None  # the file's quote, when a fix wrote a string literal in it
    tree: ast.Module | None = None  # the stdlib tree of the text, when the scan had one (given or parsed)
    preview: bool = True  # the rules whose findings are all preview ran (`preview_read`)
    # (text, parser config, parse) of each top-level chunk when the text was parsed in chunks: the
    # fix loop's rescans reuse the parses of the chunks a round left as they were (`remember`)
    chunks: list = field(default_factory=list)


def scan(
    source: str,
    path: str,
    rules: Sequence[Rule],
    *,
    code_filter: Callable[[str], bool] = lambda code: True,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    project: Any = None,
    tree: ast.Module | None = None,
    preview: bool = False,
) -> Scan:
    """Run `rules` over `source`: prefilter, parse once per parser, collect kept findings.
    A given `tree` must be `ast.parse(source)`."""
    raw = scan_raw(
        source,
        path,
        rules,
        code_filter=code_filter,
        options=options,
        project=project,
        tree=tree,
        preview=preview_read(rules, source, preview),
    )
    return settle(source, path, rules, raw.findings, raw.errors, code_filter=code_filter, preview=preview)


def scan_raw(
    source: str,
    path: str,
    rules: Sequence[Rule],
    *,
    code_filter: Callable[[str], bool] = lambda code: True,
    options: Mapping[str, Mapping[str, Any]] | None = None,
    project: Any = None,
    tree: ast.Module | None = None,
    parse: Callable[[], cst.Module] | None = None,
    elsewhere: Callable[[str], bool] | None = None,
    quote: Callable[[], str] | None = None,
    preview: bool = True,
    edits: bool = True,
) -> RawScan:
    """The ordinary rules' findings on `source` (a given `tree` must be `ast.parse(source)`),
    preview ones included (`settle` keeps them only in preview mode). With `preview` False (what
    `preview_read` answers for the whole text) the rules whose every finding is preview
    (`Rule.preview_only`) are not run: nothing would read their findings.

    `parse`, `elsewhere` and `quote` serve the language server (`jaxfix.engine.incremental`): the
    libcst module of `source` assembled from statements parsed before, whether a name is spelled in
    code a reduced text left out, and the quote the whole text writes its strings with. With
    `edits` False the fixes are decided but their edits not built (`RuleContext.rewrite`).
    """
    # In a file traced code of another module calls into, the rules that follow calls skip their
    # text test and `could_match`, which see this file alone (it may not even import jax), and
    # are screened by `could_match_in` alone, which sees the project's entries (`screens_admit`).
    entered = _entered_from_elsewhere(project, path)
    candidates = [
        r
        for r in rules
        if not r.sees_findings
        and (preview or not r.preview_only)
        and ((entered and r.follows_calls) or r.passes_prefilter(source))
    ]
    result = RawScan(preview=preview)
    if tree is None:
        # Checked even when no rule's prefilter admits the text: a syntax error is always reported.
        if not candidates:
            check_syntax(source, path)
            return result
        tree = parse_ast(source, path)
    result.tree = tree
    if candidates:
        candidates = [r for r in candidates if (entered and r.follows_calls) or r.could_match(tree)]
    if candidates:
        # the module is set below, once some rule's last screen (`could_match_in`) admits the file
        ctx = RuleContext(
            source, path, options=options, project=project, tree=tree, elsewhere=elsewhere, quote=quote, edits=edits
        )
        candidates = [r for r in candidates if _admits(r, ctx)]
    if candidates:
        try:
            ctx.set_module(parse() if parse is not None else parse_whole(source, tree, result.chunks))
        except cst.ParserSyntaxError as exc:
            raise AnalysisError(
                f"syntax error at line {exc.raw_line}, column {exc.raw_column}: {exc.message}"
            ) from None
        except RecursionError:
            raise AnalysisError("expression nested too deeply for the parser") from None
        for done, rule in enumerate(candidates, 1):
            try:
                # all of a rule's findings or none: one that fails part way (code nested too deeply
                # for one of its walks) reports the error alone, not what it found before failing
                found = [f for f in rule.check(ctx) if code_filter(f.code)]
                result.findings.extend(found)
            except RecursionError:
                result.errors.append(f"rule {rule.name}: code nested too deeply to analyse")
            except Exception as exc:  # a bug in one rule must not lose the others' results
                result.errors.append(f"internal error in rule {rule.name}: {type(exc).__name__}: {exc}")
            steps.rule_done(path, done, len(candidates), len(result.findings))
        result.names_asked = ctx.names_asked
        result.undecided = ctx.undecided
        result.quote_used = ctx.quote_used
        ctx.release()
    return result


def preview_read(rules: Sequence[Rule], source: str, preview: bool) -> bool:
    """Are the preview findings of a scan of `source` read (`scan_raw`'s `preview`)? In preview
    mode they are shown; otherwise `settle` drops them all, after a rule that reads the other
    findings (JAX001: a `# noqa` for a preview finding is not unused) has seen them, which runs on
    a text its own text test admits. A file with no `noqa` in a default check needs none: JAX402
    and JAX404 then do not run (on a generated 50,000-line file, the fix loop's rescan no longer
    runs JAX305's analysis of every traced function, which only it needed)."""
    return preview or any(_reads_findings(rule, source) for rule in rules)


def _reads_findings(rule: Rule, source: str) -> bool:
    """Does `rule` read the other rules' findings on `source` (`settle` runs it)?"""
    return rule.sees_findings and rule.passes_prefilter(source)


def screens_admit(rule: Rule, ctx: RuleContext) -> bool:
    """Do `rule`'s screens admit `ctx`'s text (its `tree` given, its module not yet set), asked as
    `scan_raw` asks them rule by rule: the text test, `could_match` and `could_match_in`, the
    first two skipped for a rule that follows calls in a file other modules' traced code enters.
    For the soundness checks (tests, scripts/screen_soundness.py), which run `check` anyway."""
    entered = rule.follows_calls and _entered_from_elsewhere(ctx.project, ctx.path)
    if not entered and not (rule.passes_prefilter(ctx.source) and rule.could_match(ctx.tree)):
        return False
    return _admits(rule, ctx)


def _admits(rule: Rule, ctx: RuleContext) -> bool:
    """`rule.could_match_in(ctx)`; a screen that fails admits the file (`check` then reports the
    failure as it reports its own)."""
    try:
        return rule.could_match_in(ctx)
    except Exception:  # noqa: BLE001 - RecursionError included
        return True


def _entered_from_elsewhere(project: Any, path: str) -> bool:
    """Does traced code of another module call into this file (the screens see one file only)?"""
    if project is None or not hasattr(project, "cross_entries"):
        return False
    name, _ = project.module_for_path(path)
    return bool(project.cross_entries(name))


def check_syntax(source: str, path: str) -> None:
    """Raise what `parse_ast` raises on `source`, for a text no rule looks into, without building
    its tree: the symbol table (`symtable`) runs the same parser and makes no Python object per
    node, 30% less time than `ast.parse` on the jax/flax/optax corpus. It also refuses a few
    programs the parser accepts (`nonlocal` at module level, a parameter declared global); those
    get the parser's own verdict."""
    try:
        symtable.symtable(source, path, "exec")
    except Exception:  # noqa: BLE001 - SyntaxError, RecursionError, MemoryError, ValueError alike
        parse_ast(source, path)


# PEP 695 (Python 3.12): `type Alias = ...`, `def f[T](...)`, `class C[T]:`
_PEP_695 = re.compile(
    r"^[ \t]*(?:type[ \t]+\w+[ \t]*(?:\[[^\]\n]*\])?[ \t]*=|(?:async[ \t]+)?def[ \t]+\w+[ \t]*\[|class[ \t]+\w+[ \t]*\[)",
    re.M,
)


def _newer_python(source: str, line: int | None) -> bool:
    """Whether the line this interpreter rejects is Python 3.12 syntax (a `type` alias or type
    parameters), which the stdlib `ast` the screens and the verifier need reads only from 3.12 on.
    A pattern, not a second parser: libcst's native parser would overflow its stack on text the
    interpreter refuses for nesting too deep."""
    if sys.version_info >= (3, 12) or not line:
        return False
    lines = source.splitlines()
    return 0 < line <= len(lines) and _PEP_695.match(lines[line - 1]) is not None


# From this size on a text is parsed in chunks (`parse_in_chunks`): below it the two cost the same.
CHUNKED_PARSE_SIZE = 64_000


def parse_whole(source: str, tree: ast.Module, parsed_out: list | None = None) -> cst.Module:
    """The libcst module of `source` (`tree`: its `ast.parse`), parsed in chunks where that is
    faster and the chunks allow it (then listed in `parsed_out`, `parse_in_chunks`); raises what
    `parse_module` raises."""
    if len(source) >= CHUNKED_PARSE_SIZE:
        module = parse_in_chunks(source, tree, parsed_out)
        if module is not None:
            return module
    return parse_module(source)


def parse_ast(source: str, path: str) -> ast.Module:
    """`ast.parse`, with the one-line `AnalysisError` every front end reports."""
    try:
        return ast.parse(source, filename=path)
    except SyntaxError as exc:
        if _newer_python(source, exc.lineno):
            raise AnalysisError(
                f"line {exc.lineno} uses syntax newer than this Python "
                f"({sys.version_info.major}.{sys.version_info.minor}) parses (a `type` statement or "
                "`def f[T]` generics, Python 3.12): run jaxfix with that Python to check this file"
            ) from None
        raise AnalysisError(f"syntax error at line {exc.lineno}, column {exc.offset}: {exc.msg}") from None
    except (ValueError, RecursionError, MemoryError) as exc:
        raise AnalysisError(f"cannot parse: {type(exc).__name__}: {exc}") from None


def settle(
    source: str,
    path: str,
    rules: Sequence[Rule],
    raw: list[Finding],
    errors: list[str],
    *,
    code_filter: Callable[[str], bool] = lambda code: True,
    comments: Callable[[], list[tuple[int, int, str]]] | None = None,
    preview: bool = False,
) -> Scan:
    """Let the rules that read other findings (JAX001) add theirs, then apply noqa and sort. A
    finding a rule marks `preview` is kept only with `preview` (Ruff's preview mode:
    `Finding.preview`), but JAX001 sees it: a `# noqa` for it is not unused (a `check --fix`
    would otherwise delete the comment a user wrote for it)."""
    raw = list(raw)
    for rule in rules:
        if _reads_findings(rule, source):
            found = rule.check_findings(source, path, list(raw), code_filter, comments=comments)
            raw.extend(f for f in found if code_filter(f.code))
    lines = source.splitlines() if raw else []  # most files have nothing to suppress
    findings = [f for f in raw if (preview or not f.preview) and not is_suppressed(f, lines)]
    findings.sort(key=Finding.sort_key)
    hidden = 0
    if not preview and len(findings) < len(raw):
        # a preview-only rule runs in this mode only beside a `noqa` (`preview_read`): not counted
        only = {info.code for rule in rules if rule.preview_only for info in rule.codes}
        hidden = sum(1 for f in raw if f.preview and f.code not in only and not is_suppressed(f, lines))
    return Scan(findings=findings, errors=list(errors), hidden_preview=hidden)


def fix_is_wanted(finding: Finding, unsafe_fixes: bool) -> bool:
    fix = finding.fix
    if fix is None or not fix.applicable:
        return False
    return fix.safety is Safety.SAFE or (fix.safety is Safety.UNSAFE and unsafe_fixes)


def _non_overlapping(findings: list[Finding]) -> list[Finding]:
    """The findings whose fixes touch no earlier chosen fix's text, in order: one pass over the
    chosen edits sorted by offset (bisect), not every pair (quadratic on a file with thousands)."""
    chosen: list[Finding] = []
    taken: list[tuple[int, int]] = []  # (start, end) of the chosen edits, sorted
    for finding in findings:
        spans = [(e.start, e.end) for e in finding.fix.edits]
        if any(_touches(taken, start, end) for start, end in spans):
            continue
        chosen.append(finding)
        for span in spans:
            bisect.insort(taken, span)
    return chosen


def _touches(taken: list[tuple[int, int]], start: int, end: int) -> bool:
    """Does the edit `start:end` overlap one of `taken` (sorted), as `edits.overlaps` judges: a
    shared point, or the same start or the same end, counts (two inserts at one point)."""
    i = bisect.bisect_left(taken, (start, -1))
    # a chosen edit starting before `start` may reach past it; chosen edits never overlap each
    # other, so only the one just before can (and the ones from `start` up to `end`)
    if i > 0:
        s, e = taken[i - 1]
        if start < e or e == end:
            return True
    while i < len(taken) and taken[i][0] <= end:
        s, e = taken[i]
        if (start < e and s < end) or s == start or e == end:
            return True
        i += 1
    return False


class FixedSites:
    """One finding, one fix (issue #33), in lines of the original text.

    A later round does not fix again a site an earlier round fixed (same code, same line), unless
    the first fix rewrote that site and the finding is on its output: a rule continuing its own
    rewrite (the split of `if static and traced:` whose nested `if` then gets its `jnp.where`). So
    a `while` given a static argument is not then rewritten to `lax.while_loop` on top. And a
    finding the first scan (what `check` shows) had with no fix to apply (manual) is not fixed
    because another fix changed its code (a JAX303 loop made fixable by the JAX403 fix of its
    body). New findings a fix causes (a constant passed on to the caller) are fixed as before.
    What is held back stays in `remaining`; the next `check` shows it with the fix it then has."""

    def __init__(self, first: Sequence[Finding], unsafe_fixes: bool) -> None:
        wanted = {(f.code, f.line) for f in first if fix_is_wanted(f, unsafe_fixes)}
        self._unfixed = {(f.code, f.line) for f in first if not fix_is_wanted(f, unsafe_fixes)} - wanted
        self._fixed: dict[tuple[str, int], list[tuple[int, int]]] = {}  # site -> its fix's edited lines

    def record(self, text: str, chosen: Sequence[Finding], lines: LineMap) -> None:
        """`chosen` (positioned in `text`, mapped by `lines` so far) are applied to `text`."""
        starts = _line_starts(text)
        for finding in chosen:
            spans = self._fixed.setdefault((finding.code, lines.original(finding).line), [])
            for edit in finding.fix.edits:
                first = bisect.bisect_right(starts, edit.start) + 1
                last = bisect.bisect_right(starts, max(edit.start, edit.end - 1)) + 1
                spans.append((lines.original_line(first), lines.original_line(last)))

    def allows(self, finding: Finding, lines: LineMap) -> bool:
        """May a later round fix `finding` (positioned in the latest text)?"""
        placed = lines.original(finding)
        site = (placed.code, placed.line)
        if site in self._unfixed:
            return False
        spans = self._fixed.get(site)
        return spans is None or any(a <= placed.line <= b for a, b in spans)


def _line_starts(text: str) -> list[int]:
    """Offsets where the 2nd, 3rd, ... lines of `text` begin (a bisect gives an offset's 1-based line)."""
    starts, at = [], text.find("\n")
    while at != -1:
        starts.append(at + 1)
        at = text.find("\n", at + 1)
    return starts


@dataclass
class FixOutcome:
    text: str
    applied: list[Finding] = field(default_factory=list)  # at their lines in the original text
    remaining: list[Finding] = field(default_factory=list)  # at their lines in `text`
    rounds: int = 0
    error: str | None = None
    lines: LineMap = field(default_factory=LineMap)  # lines of `text` -> lines of the original

    def remaining_in_original(self) -> list[Finding]:
        """`remaining` at their lines in the original text (the file on disk until it is written)."""
        return [self.lines.original(f) for f in self.remaining]


def fix_until_stable(
    source: str,
    first: Scan,
    rescan: Callable[..., Scan],
    *,
    unsafe_fixes: bool = False,
    max_rounds: int = MAX_FIX_ROUNDS,
    per_round: int | None = None,
) -> FixOutcome:
    """Apply non-overlapping wanted fixes, rescan, repeat; fixes that overlapped wait a round.
    A later round fixes no site twice and no finding the first scan had unfixable (`FixedSites`).
    All the non-overlapping fixes of a round are applied in one pass over the text, and `rescan`
    may reuse what they left alone (`pipeline._rescanner`); it is called as `rescan(text, tree=...)`,
    `tree` being `ast.parse(text)`, which the round parsed to check its result (`scan` takes it as is:
    a second parse of the whole text was 3% of a fix of a file with thousands of fixes). `per_round`:
    apply at most that many fixes a round (the tests check one at a time gives the batched text).

    Every round's result must parse, or the round is discarded and reported: a
    rule bug can cost a fix, never the user's code.
    """
    outcome = FixOutcome(text=source, remaining=first.findings)
    sites = FixedSites(first.findings, unsafe_fixes)
    for round_number in range(1, max_rounds + 1):
        wanted = [
            f
            for f in outcome.remaining
            if fix_is_wanted(f, unsafe_fixes) and (round_number == 1 or sites.allows(f, outcome.lines))
        ]
        if not wanted:
            return outcome
        chosen = _non_overlapping(wanted)[:per_round]
        edits = [e for f in chosen for e in f.fix.edits]
        edited = apply_edits(outcome.text, edits)
        try:
            new_text = apply_import_requests(
                edited,
                add=[imp for f in chosen for imp in f.fix.imports],
                remove=[imp for f in chosen for imp in f.fix.unused_imports],
            )
            new_tree = ast.parse(new_text)
            steps.fix_round(round_number, len(outcome.applied) + len(chosen))
            next_scan = rescan(new_text, tree=new_tree)
        except (SyntaxError, AnalysisError, cst.ParserSyntaxError, RecursionError) as exc:
            codes = ", ".join(sorted({f.code for f in chosen}))
            outcome.error = f"internal error: fixes for {codes} produced code that does not parse ({exc}); not applied"
            return outcome
        outcome.applied.extend(outcome.lines.original(f) for f in chosen)
        sites.record(outcome.text, chosen, outcome.lines)
        outcome.lines.record_edits(outcome.text, edits)
        outcome.lines.record(edited, new_text)  # the imports' lines (only their block is diffed)
        outcome.text = new_text
        outcome.remaining = next_scan.findings
        outcome.rounds = round_number
    leftover = sorted(
        {f.code for f in outcome.remaining if fix_is_wanted(f, unsafe_fixes) and sites.allows(f, outcome.lines)}
    )
    if leftover:
        outcome.error = f"fixes did not converge after {max_rounds} rounds ({', '.join(leftover)})"
    return outcome
