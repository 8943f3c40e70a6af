"""The data every layer shares: findings, fixes, edits and per-file results.

Kept free of libcst and of I/O so that rules, the engine, reporters, the LSP
server and the verifier can all exchange these values (and pickle them across
a process pool) without importing each other.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any


class Safety(str, enum.Enum):
    """How far a fix may be trusted without a human looking at it."""

    SAFE = "safe"  # applied by `jaxfix fix`
    UNSAFE = "unsafe"  # applied only with --unsafe-fixes
    MANUAL = "manual"  # never applied; the message says what to do


@dataclass(frozen=True)
class Code:
    """One stable rule code (rules declare theirs; `jaxfix.rulebase` re-exports it). `fix` is "always", "sometimes" or "never" (Ruff's availability)."""

    code: str
    name: str
    summary: str
    fix: str = "sometimes"


@dataclass(frozen=True)
class Option:
    """A rule option, set in `[tool.jaxfix.<rule-name>]` (`jaxfix.rulebase` re-exports it)."""

    name: str
    default: Any
    doc: str
    choices: tuple[Any, ...] | None = None

    def validate(self, value: Any) -> str | None:
        """An error message for a bad value, else None."""
        expected = type(self.default)
        if expected is float and isinstance(value, int) and not isinstance(value, bool):
            return None
        if type(value) is not expected:
            return f"expected {expected.__name__}, got {type(value).__name__} {value!r}"
        if self.choices is not None and value not in self.choices:
            return f"expected one of {', '.join(map(repr, self.choices))}, got {value!r}"
        return None


@dataclass(frozen=True)
class Edit:
    """Replace source[start:end] (character offsets) with `text`."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class ImportRequest:
    """An import a fix needs: `import module [as alias]` or `from module import name [as alias]`."""

    module: str
    name: str | None = None
    alias: str | None = None
    # must be bound by the file's leading imports: code at a notebook's top level runs before a
    # later cell's import (`RuleContext.reference_at`); not part of the request's identity
    leading: bool = field(default=False, compare=False)

    def render(self) -> str:
        if self.name is None:
            return f"import {self.module}" + (f" as {self.alias}" if self.alias else "")
        return f"from {self.module} import {self.name}" + (f" as {self.alias}" if self.alias else "")


@dataclass(frozen=True)
class Evidence:
    """What differential execution showed about one fix."""

    verdict: str  # "verified" | "mismatch" | "unverifiable" | "ineffective" (verified, no compile removed)
    detail: str  # one paragraph for people; the fields below say the same for tools
    data: dict[str, Any] = field(default_factory=dict)  # the numbers: inputs, compiles, times, key path...
    input_source: str = ""  # where the inputs came from: recorded, example, drive, synthesized, ...
    family: str = ""  # caching | jit-placement | control-flow | "" (see jaxfix.verify.figures)
    headline: str = ""  # the figure that matters for the family, e.g. "10 compiles per call -> 0"
    notes: tuple[str, ...] = ()  # what was not compared and why, added leaves reported as intended


@dataclass(frozen=True)
class Fix:
    title: str
    safety: Safety
    edits: tuple[Edit, ...] = ()
    imports: tuple[ImportRequest, ...] = ()  # imports the new code needs
    # imports whose use the fix removed: the engine drops each one nothing else uses (F401)
    unused_imports: tuple[ImportRequest, ...] = ()
    evidence: Evidence | None = None
    # False: the rule decided the fix (title, safety, imports) but did not build its edits, in a
    # run that prints only titles (`RuleContext.rewrite`); such a fix has no edits to apply or show
    built: bool = True

    @property
    def changes(self) -> bool:
        """Does the fix change the text: it has edits, or they were not built (a rule decides a
        rewrite to change code: built, its edits are never empty; tests/test_titles_only.py
        holds every golden and real-world case to it)."""
        return bool(self.edits) or not self.built

    @property
    def applicable(self) -> bool:
        return self.safety is not Safety.MANUAL and self.changes


@dataclass(frozen=True)
class Finding:
    """One problem at one place. Lines are 1-based; columns are 1-based code points."""

    code: str
    name: str
    path: str
    line: int
    column: int
    end_line: int
    end_column: int
    message: str
    fix: Fix | None = None
    cell: int | None = None  # a notebook's cell (1-based, markdown cells counted); line and column are in it
    # Shown only in preview mode (`--preview`, `preview = true`), as Ruff does with its preview
    # rules: the evidence the rule had is of a kind that was mostly wrong on code nobody prepared
    # (benchmarks/blind): reported on it by default, the rule could not tell (issue #29).
    preview: bool = False

    def with_fix(self, fix: Fix | None) -> "Finding":
        return replace(self, fix=fix)

    def in_preview(self, when: bool = True) -> "Finding":
        """This finding, shown only in preview mode when `when` (the rule's evidence path is one
        that did not hold on first contact)."""
        return replace(self, preview=True) if when and not self.preview else self

    def sort_key(self) -> tuple:
        return (self.path, self.cell or 0, self.line, self.column, self.code)


@dataclass
class FileResult:
    """Everything `analyze` learned about one file."""

    path: str
    source: str
    findings: list[Finding] = field(default_factory=list)
    fixed_source: str | None = None  # None when nothing was fixed
    error: str | None = None  # one line, set when the file could not be handled
    fixes_applied: list[Finding] = field(default_factory=list)  # at their lines in `source`
    remaining: list[Finding] = field(default_factory=list)  # findings left in the fixed text
    remaining_in_source: list[Finding] = field(default_factory=list)  # the same, at their lines in `source`
    rounds: int = 0
    hidden_preview: int = 0  # preview findings left out of `findings` (`fixing.Scan.hidden_preview`)

    @property
    def changed(self) -> bool:
        return self.fixed_source is not None and self.fixed_source != self.source

    @property
    def display_path(self) -> str:
        return str(Path(self.path))
