"""Analysing an edited document again by reusing what the edit cannot have changed.

The language server analyses a document after every pause in typing; a full analysis of a
2,000-line module costs most of a second, mostly libcst parsing and rule walks of code the
edit never touched. Findings of a group of top-level statements linked by names
(`analysis.chunks`) depend only on that group, the module's imports and the statement before
each of its chunks, so each group's findings are kept under those texts, and an edit
re-analyses only the groups whose texts changed. They are analysed on a reduced text in which
each run of other statements is one placeholder of the same lines and length (a string of
spaces), so lines, columns and offsets are the document's own and libcst gives each kept
statement the same comments. Chunks are parsed (`chunkparse`) and tokenized (for JAX001) once per text.

Whatever the reduced text cannot decide falls back to the whole text: a fix whose new
name is spelled in left-out code, a finding outside its group, an internal rule error.
`tests/test_incremental.py` checks the result equals `engine.analyze` on every fixture
under many edits; the fuzz suite and `scripts/incremental_soundness.py` do the same on
generated programs and on real code.

This module runs the analyses (`IncrementalAnalyzer`, `_Run`); the chunks, groups, placeholders
and the findings kept relative to their chunks are `incremental_plan`'s.
"""

from __future__ import annotations

import ast
import bisect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jaxfix.engine import selected_rules
from jaxfix.engine.config import Config
from jaxfix.engine.fixing import (
    AnalysisError,
    RawScan,
    _entered_from_elsewhere,
    parse_ast,
    preview_read,
    scan_raw,
    settle,
)
from jaxfix.engine.incremental_plan import Entry, Memo, Plan, spelling
from jaxfix.engine.suppression import skips_file
from jaxfix.model import FileResult, Finding
from jaxfix.rulebase import Rule


@dataclass
class Stats:
    """What the last analysis did, for the benchmark and the tests."""

    groups: int = 0
    analysed: int = 0  # groups the rules ran on (the rest were reused or screened)
    whole_text: bool = True
    screened: int = 0  # groups the stdlib screens found nothing to report in (no libcst parse)


@dataclass
class IncrementalAnalyzer:
    """One document's analyses; `analyze` returns what `engine.analyze(fix=False)` would."""

    _key: tuple | None = None  # (config, path, project, its generation)
    _entries: dict[tuple, Entry] = field(default_factory=dict)
    _memo: "Memo" = field(default_factory=lambda: Memo())
    _last: tuple | None = None  # (text, its stdlib tree, its chunks): what the next edit is spliced into
    stats: Stats = field(default_factory=Stats)
    parse_error: str | None = None  # why the last text did not parse; None when it did

    def analyze(self, source: str, path: str, config: Config, project=None, tree=None) -> FileResult:
        """`project`: the project index (cross-file facts); analyses are reused only under the same one.
        A given `tree` (the caller parsed the text already) must be `ast.parse(source)`."""
        result = FileResult(path=path, source=source)
        self.stats = Stats()
        try:
            tree = tree or self._spliced(source) or parse_ast(source, path)
        except AnalysisError as exc:
            self.parse_error = str(exc)
            if not skips_file(source):
                result.error = self.parse_error
            return result
        self.parse_error = None
        if skips_file(source):
            return result
        rules = selected_rules(config, path)
        # the groups' findings hold preview ones only when the whole text's are read (`preview_read`)
        preview = preview_read(rules, source, config.preview)
        key = (config, path, id(project), getattr(project, "generation", 0), preview)
        if self._key != key:
            self._key, self._entries = key, {}
        code_filter = lambda code: config.code_selected(code, path)  # noqa: E731
        plan = Plan(source, tree, self._memo)
        self._memo = plan.memo
        self._last = (source, tree, plan.chunks)
        run = _Run(plan, path, rules, code_filter, config.options(), project, preview)
        raw, errors = self._raw_findings(run)
        settled = settle(
            source, path, rules, raw, errors, code_filter=code_filter, comments=plan.comments, preview=config.preview
        )
        result.findings = result.remaining = result.remaining_in_source = settled.findings
        result.hidden_preview = settled.hidden_preview
        if settled.errors:
            result.error = "; ".join(settled.errors)
        return result

    def reuse_parses(self, raw: RawScan) -> None:
        """Take the parses of the chunks a whole-text scan parsed its text in (`RawScan.chunks`)
        as this document's: the next `analyze` parses only the chunks whose text changed."""
        self._memo.seed(raw.chunks)

    def remember(self, source: str, path: str, config: Config, project, raw: RawScan) -> None:
        """Keep what a whole-text scan of `source` found (`scan_raw`'s `raw`, with its tree), as an
        `analyze` of `source` that analysed every group would have kept: the next `analyze` (the
        fix loop's scan after a round of fixes) then re-analyses only the groups the round changed.
        Without it that first rescan analysed every group a screen admits: all of them again after
        one fix in a large file.

        Not when the scan's fixes asked about many fresh names: which group asked which is not
        known, so every entry would depend on all of them (a search of every chunk per name, and
        a fix writing one of them changes every entry): quadratic on a file with thousands of
        hoists (a generated 50,000-line file: 7,350 names, 45 s of CPU)."""
        if not rememberable(raw) or skips_file(source):
            return
        preview = preview_read(selected_rules(config, path), source, config.preview)
        if preview and not raw.preview:
            return  # its groups lack the preview findings this text's `noqa` comments need
        self._key = (config, path, id(project), getattr(project, "generation", 0), preview)
        plan = Plan(source, raw.tree, self._memo)
        self._memo = plan.memo
        self._last = (source, raw.tree, plan.chunks)
        if plan.groups is None:
            self._entries = {}
            return
        self._entries = plan.entries(raw, [(plan.key(group), group) for group in plan.groups])

    def _spliced(self, source: str) -> ast.Module | None:
        """The stdlib tree of `source` from the last text's, when the edit between them lies inside
        one chunk and keeps its line count: that chunk parsed alone, the other statements reused
        (None: parse the whole text).

        The text before the chunk ends a statement at depth 0 and the text after it starts one, so
        the tokenizer and the grammar see the chunk as a sequence of statements of its own: a
        chunk that parses alone gives, in place, what parsing the whole text gives; one that does
        not (a bracket left open, a decorator without its def) is parsed with the whole text,
        which reports the error. `tests/test_incremental.py` checks both trees are the same."""
        if self._last is None:
            return None
        old, tree, chunks = self._last
        if old == source or not chunks:
            return None
        start = _common_prefix(old, source)
        tail = min(_common_suffix(old, source), len(old) - start, len(source) - start)
        old_end = len(old) - tail
        i = bisect.bisect_right([c.start for c in chunks], start) - 1
        if i < 0:
            return None
        chunk = chunks[i]
        if not (chunk.code_start <= start and old_end < chunk.end):
            return None
        new_text = source[chunk.start : chunk.end + len(source) - len(old)]
        if new_text.count("\n") != chunk.text.count("\n") or "\r" in new_text or "\r" in chunk.text:
            return None  # later statements would move: parse the whole text
        try:
            alone = ast.parse(new_text)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return None
        if not alone.body:
            return None
        ast.increment_lineno(alone, chunk.line - 1)
        body = [*tree.body[: chunk.statements.start], *alone.body, *tree.body[chunk.statements.stop :]]
        return ast.Module(body=body, type_ignores=[])

    def _raw_findings(self, run: "_Run") -> tuple[list[Finding], list[str]]:
        plan = run.plan
        if plan.groups is None:
            self._entries = {}
            raw = run.whole()
            return raw.findings, raw.errors
        keys = [plan.key(group) for group in plan.groups]
        todo = {i for i, key in enumerate(keys) if not self._valid(self._entries.get(key), plan, plan.groups[i])}
        # Groups no rule's stdlib screen admits have no findings: no libcst parse, no rule runs.
        clean = run.screened_out(todo)
        known = {**self._entries, **{keys[i]: Entry([], {}) for i in clean}}
        todo -= clean
        raw = None
        if todo and len(todo) < len(keys):
            todo = plan.with_footer_owners(todo)
            raw = run.reduced(todo)
        if raw is None and todo:
            todo, raw = set(range(len(keys))), run.whole()
        self.stats = Stats(groups=len(keys), analysed=len(todo), whole_text=len(todo) == len(keys), screened=len(clean))
        findings: list[Finding] = []
        entries: dict[tuple, Entry] = {}
        for i, key in enumerate(keys):
            if i not in todo:
                entries[key] = known[key]
                findings.extend(plan.place(kept, plan.groups[i]) for kept in entries[key].kept)
        if raw is not None:
            findings.extend(raw.findings)
            if not raw.errors:
                entries.update(plan.entries(raw, [(keys[i], plan.groups[i]) for i in sorted(todo)]))
        self._entries = entries
        return findings, (raw.errors if raw is not None else [])

    @staticmethod
    def _valid(entry: Entry | None, plan: "Plan", group: list[int]) -> bool:
        return (
            entry is not None
            and all(plan.spellers(name, group) == texts for name, texts in entry.names.items())
            and all(plan.after_import(j) == text for j, text in entry.anchors.items())
            and (entry.quote is None or plan.quote() == entry.quote)
        )


# At most this many fresh names asked by a scan's fixes for `IncrementalAnalyzer.remember` to keep
# its findings (each entry depends on every name).
_REMEMBERED_NAMES = 32


def rememberable(raw: RawScan) -> bool:
    """Whether `IncrementalAnalyzer.remember` keeps anything of `raw` (else its tree need not be kept for it)."""
    return raw.tree is not None and not raw.errors and not raw.undecided and len(raw.names_asked) <= _REMEMBERED_NAMES


@dataclass
class _Run:
    """The rules of one analysis, run on the whole text or on a reduced one."""

    plan: "Plan"
    path: str
    rules: Sequence[Rule]
    code_filter: Callable[[str], bool]
    options: Mapping[str, Mapping[str, Any]]
    project: Any = None
    preview: bool = True  # `scan_raw`'s: are the whole text's preview findings read

    def whole(self) -> RawScan:
        plan = self.plan
        return scan_raw(
            plan.source,
            self.path,
            self.rules,
            code_filter=self.code_filter,
            options=self.options,
            project=self.project,
            tree=plan.tree,
            parse=lambda: plan.module(plan.source, set(range(len(plan.chunks)))),
            preview=self.preview,
        )

    def screened_out(self, todo: set[int]) -> set[int]:
        """The groups of `todo` that no rule can report on: the text tests (`Rule.passes_prefilter`)
        or the stdlib screens (`Rule.could_match`) of the rules reject the program of their
        statements and the imports, whose analysis finds all their findings (the statements of
        other groups share no name with them). Parts of `todo` are screened together first, so a
        document with a few suspect groups is screened a few times over.

        None are when traced code of another module enters this one: those rules then run past
        their screens (`Rule.follows_calls`)."""
        plan = self.plan
        if not todo or _entered_from_elsewhere(self.project, self.path):
            return set()
        rules = [
            r
            for r in self.rules
            if not r.sees_findings and (self.preview or not r.preview_only) and r.passes_prefilter(plan.source)
        ]
        if not rules:
            return set(todo)
        body = plan.tree.body
        clean: set[int] = set()

        imports = set(plan.import_chunks)

        def admitted(groups: list[int], rules: list[Rule]) -> list[Rule]:
            """The rules to ask about parts of `groups`: none when no rule admits their program.
            A rule that rejects it finds nothing in any of these groups, so it is not asked again
            about their parts: the ones whose text test or screen said no before the first that
            said yes are left out (the ones after it were not asked)."""
            # Not the statements before the chunks that `kept` adds: they share no name with these
            # groups (else they would be one group) and shape only the fixes' text, not what is found.
            keep = sorted(imports | {i for g in groups for i in plan.groups[g]})
            # The text test first, on this program's text (a reduced text adds only placeholders,
            # which no rule's text test can match in): most rules are out before any tree is built.
            text = "".join(plan.chunks[i].text for i in keep)
            asked = [rule for rule in rules if rule.passes_prefilter(text)]
            if not asked:
                return []
            tree = ast.Module(body=[body[k] for i in keep for k in plan.chunks[i].statements], type_ignores=[])
            for k, rule in enumerate(asked):
                if rule.could_match(tree):
                    return asked[k:]
            return []

        def split(groups: list[int], rules: list[Rule]) -> None:
            if len(groups) > _SCREEN_PARTS:
                # Its parts are screened at once: together they are this set's text, screened for
                # about the cost of screening it whole, which saves a level wherever some part is
                # admitted (a fix round's rescan of a file with thousands of fixes screened the
                # whole text once more). A part a screen rejects holds no finding, whichever
                # level rejects it: the findings are the same.
                in_parts(groups, rules)
                return
            still = admitted(groups, rules)
            if not still:
                clean.update(groups)
            elif len(groups) > 1:
                in_parts(groups, still)

        def in_parts(groups: list[int], rules: list[Rule]) -> None:
            """Screen the parts of an admitted set, then split the admitted parts further; when
            every part is admitted (suspect groups everywhere: the scan after a round of fixes of a
            file with thousands of findings), each of their groups is screened alone instead: each
            further level would screen all the text again (a 20k-line generated file's rescan
            spent 40% of its time in the levels)."""
            parts = min(_SCREEN_PARTS, len(groups))
            pieces = [groups[k * len(groups) // parts : (k + 1) * len(groups) // parts] for k in range(parts)]
            asked = [(piece, admitted(piece, rules)) for piece in pieces]
            dense = all(still for _, still in asked)
            for piece, still in asked:
                if not still:
                    clean.update(piece)
                elif len(piece) > 1 and dense:
                    clean.update(g for g in piece if not admitted([g], still))
                elif len(piece) > 1:
                    in_parts(piece, still)

        # A large group (many functions calling each other) is screened alone, once: in a part it
        # would be screened again at every level of the split.
        large = max(8, len(plan.chunks) // 16)
        for g in sorted(todo):
            if len(plan.groups[g]) > large:
                split([g], rules)
        small = sorted(g for g in todo if len(plan.groups[g]) <= large)
        if small:  # (no group: the imports alone, which no screen need look at)
            split(small, rules)
        return clean

    def reduced(self, todo: set[int]) -> RawScan | None:
        """The findings of groups `todo` from a text where every other chunk is a placeholder;
        None when that text cannot decide them (then the whole text is analysed)."""
        plan = self.plan
        keep = plan.kept(set(todo))
        analysed = {i for g in todo for i in plan.groups[g]}
        pieces, cursor = [], 0
        for first, last in plan.left_out(keep):
            pieces += [plan.source[cursor : plan.chunks[first].code_start], plan.placeholder(first, last)]
            cursor = plan.chunks[last].end
        pieces.append(plan.source[cursor:])
        outside = "\n".join(chunk.text for i, chunk in enumerate(plan.chunks) if i not in keep)
        reduced = "".join(pieces)
        # The reduced text's tree is the module's with the left-out statements gone (their
        # placeholders are bare constants no rule looks at): no second `ast.parse`.
        tree = ast.Module(
            body=[plan.tree.body[k] for i in sorted(keep) for k in plan.chunks[i].statements], type_ignores=[]
        )
        try:
            raw = scan_raw(
                reduced,
                self.path,
                self.rules,
                code_filter=self.code_filter,
                    options=self.options,
                project=self.project,
                tree=tree,
                parse=lambda: plan.reduced_module(reduced, keep),
                elsewhere=lambda name: spelling(name).search(outside) is not None,
                quote=plan.quote,
                preview=self.preview,
            )
        except AnalysisError:
            return None
        # The statements kept only as the neighbours of analysed ones were analysed without
        # their own groups: their findings are not these.
        raw.findings = [f for f in raw.findings if plan.chunk_of_line(f.line) in analysed]
        if raw.undecided or raw.errors or plan.strays(raw.findings, [plan.groups[g] for g in todo]):
            return None
        return raw


# An admitted set of groups is screened again in this many parts: a level of the split screens
# about the text of the level before, and parts of eight need a third of the levels halves need
# (on the benchmark's 2,000 lines: 20.2 -> 18.4 ms CPU, min of 15). The findings cannot change: a
# set of groups a rule's screen rejects holds none of that rule's findings, whichever set it is.
_SCREEN_PARTS = 8


def _common_prefix(a: str, b: str) -> int:
    """The length of the longest common prefix of `a` and `b` (halving: string comparisons in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[low:mid] == b[low:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _common_suffix(a: str, b: str) -> int:
    """The length of the longest common suffix of `a` and `b`."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[len(a) - mid : len(a) - low] == b[len(b) - mid : len(b) - low]:
            low = mid
        else:
            high = mid - 1
    return low
