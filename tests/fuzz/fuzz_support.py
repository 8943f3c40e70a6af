"""The properties every fix must have, checked on one source text."""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass

from incremental_support import differences
from screen_support import screen_misses

from jaxfix.edits import apply_edits
from jaxfix.engine import analyze, selected_rules
from jaxfix.engine.config import Config
from jaxfix.engine.fixing import (
    MAX_FIX_ROUNDS,
    AnalysisError,
    _non_overlapping,
    fix_is_wanted,
    scan,
)
from jaxfix.engine.imports import apply_import_requests

# What analysing text that is not (for libcst) analysable may say: a clean one-line refusal.
CLEAN_REFUSAL = re.compile(r"^(syntax error at line|cannot parse: |expression nested too deeply)")
INCREMENTAL_EDITS = 2  # edits (each undone) per program checked against a full analysis
IMPORT_LINE = re.compile(r"^\s*(import |from \S+ import )")


class PropertyFailure(AssertionError):
    pass


@dataclass
class Checked:
    findings: int
    fixed: bool
    refused: bool


def _lines_spanned(text: str, start: int, end: int) -> range:
    first = text.count("\n", 0, start)
    last = text.count("\n", 0, max(start, end - 1)) if end > start else first
    return range(first, last + 1)


def _check_round(before: str, edits, imports, after: str) -> None:
    """Every line no edit touches survives unchanged and in order (import lines may be merged or dropped)."""
    touched: set[int] = set()
    for edit in edits:
        touched.update(_lines_spanned(before, edit.start, edit.end))
    old_lines = before.splitlines(keepends=True)
    kept = [
        line
        for i, line in enumerate(old_lines)
        if i not in touched and not (imports and IMPORT_LINE.match(line))
    ]
    new_lines = after.splitlines(keepends=True)
    j = 0
    for line in new_lines:
        if j < len(kept) and line == kept[j]:
            j += 1
    if j != len(kept):
        raise PropertyFailure(f"untouched line changed or lost by a fix: {kept[j]!r}")
    if "\r\n" in before and before.count("\n") == before.count("\r\n") and after.count("\n") != after.count("\r\n"):
        raise PropertyFailure("a fix wrote LF line endings into a CRLF file")


def replay(source: str, config: Config, path: str = "m.py") -> str:
    """The engine's fix loop, step by step, checking each round's untouched text."""
    rules = selected_rules(config, path)

    def run(text):
        return scan(text, path, rules, code_filter=lambda c: config.code_selected(c, path), options=config.options())

    text = source
    current = run(text)
    for _ in range(MAX_FIX_ROUNDS):
        wanted = [f for f in current.findings if fix_is_wanted(f, config.unsafe_fixes)]
        if not wanted:
            break
        chosen = _non_overlapping(wanted)
        edits = [e for f in chosen for e in f.fix.edits]
        added = [i for f in chosen for i in f.fix.imports]
        dropped = [i for f in chosen for i in f.fix.unused_imports]
        new_text = apply_import_requests(apply_edits(text, edits), added, dropped)
        imports = added + dropped
        try:
            ast.parse(new_text)
            nxt = run(new_text)
        except (SyntaxError, AnalysisError):
            return text  # the engine discards the round (and analyze reports it as an error)
        _check_round(text, edits, imports, new_text)
        text, current = new_text, nxt
    return text


def check_properties(source: str, config: Config, path: str = "m.py") -> Checked:
    """No crash, clean refusal or a result; no `could_match` screen rejects a text its rule reports
    on; the language server's incremental analysis agrees with a full one under edits; fixed
    output parses, is a fixed point, and keeps untouched text; the engine's result equals a
    checked step-by-step replay."""
    if os.environ.get("JAXFIX_FUZZ_LOG"):  # progress of a long run: one line per program
        with open(os.environ["JAXFIX_FUZZ_LOG"], "a") as log:
            log.write(f"{len(source)}\n")
    result = analyze(source, path, config, fix=True)
    if result.error is not None:
        if CLEAN_REFUSAL.match(result.error) and not result.findings:
            return Checked(0, False, True)
        raise PropertyFailure(f"analysis error: {result.error}")
    misses = screen_misses(source, path)
    if misses:
        raise PropertyFailure(f"a could_match screen rejected a text its rule reports on: {misses}")
    disagreements = differences(source, limit=INCREMENTAL_EDITS, path=path, config=config)
    if disagreements:
        raise PropertyFailure(f"incremental analysis differs from a full one: {disagreements}")
    fixed = result.fixed_source
    if fixed is None:
        return Checked(len(result.findings), False, False)
    try:
        ast.parse(fixed)
    except SyntaxError as exc:
        raise PropertyFailure(f"fixed output does not parse: {exc}") from None
    again = analyze(fixed, path, config, fix=True)
    if again.error is not None:
        raise PropertyFailure(f"error on the fixed output: {again.error}")
    if again.fixed_source is not None:
        raise PropertyFailure("not idempotent: fixing the fixed output changes it again:\n" + again.fixed_source)
    replayed = replay(source, config, path)
    if replayed != fixed:
        raise PropertyFailure("analyze() and the checked replay of its fix loop disagree")
    return Checked(len(result.findings), True, False)
