"""Join each recompilation with the static finding that removes it.

For every recompiled function, the user's files named by its causes (the call site, the
function's definition, the pytree classes JAX names) are analyzed with the same engine `check`
uses (`engine.analyze`, never importing them), with each file's own config but every rule
selected: explain names the rule even where the config turned it off (and says so). A finding
joins a cause when its code belongs to a family that can cause that kind of miss and:
- its range contains the call line (same file), or the function's definition line;
- for a pytree class change: it lies inside that class (a `cached_property` on an equinox
  Module puts its value in the instance's pytree metadata);
- for a re-defined function: it is a jit-placement finding in the function that holds the call
  and its text names the function (`jax.jit(partial(body, ...))` built a line above the call).
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from jaxfix.engine import analyze
from jaxfix.engine.config import Config, ConfigError, ConfigResolver
from jaxfix.engine.notebook import NotebookError
from jaxfix.explain.events import Function, Miss
from jaxfix.explain.notebook import notebook_source
from jaxfix.model import Finding

# Which rule families have a fix that removes a miss of each kind (by code prefix). A static
# argument that changes, or new shapes/dtypes, are what jit is keyed on: hoisting a jit (JAX2) does
# not change them, and JAX202's fix can even introduce static arguments. So no family joins them.
FAMILIES = {
    "redefined": ("JAX2",),  # a fresh jit wrapper / callable per call: jit placement
    "debug": ("JAX2",),  # the same function re-wrapped with other static_argnames or names
    "pytree": ("JAX1",),  # treedef / node metadata changes: a cache stored in a pytree instance
    "static": (),
    "types": (),
    "context": (),
    "unknown": ("JAX1", "JAX2"),
    "unrecorded": ("JAX1", "JAX2"),
}
# a static argument that is a function (equinox's filter_jit keeps the callable static): only a
# fresh-callable finding at its call site (not JAX203, whose hoist keeps the static value changing)
SITE_ONLY_FAMILIES = ("JAX201", "JAX202")


def _a_function_is_static(miss) -> bool:
    """JAX's reason shows a function in the changed static argument (`functools.partial(<function ...`)."""
    text = miss.reason + " " + miss.detail
    return "functools.partial(" in text or "<function " in text


@dataclass
class Match:
    finding: Finding
    selected: bool  # the file's own config selects this code
    shown: bool = True  # and shows the finding: not a preview one the config leaves out (`Finding.preview`)


@dataclass
class Cause:
    """Retraces of one function grouped by call site and kind, with the findings that remove them."""

    function: Function
    misses: list[Miss]
    matches: list[Match] = field(default_factory=list)
    note: str | None = None  # why nothing could be joined (file not readable, ...)

    @property
    def first(self) -> Miss:
        return self.misses[0]


@dataclass
class _FileFacts:
    findings: list[Finding]
    config: Config
    tree: ast.Module | None
    source: str


class Joiner:
    def __init__(self, resolver: ConfigResolver | None = None, project=None) -> None:
        self.resolver = resolver or ConfigResolver()
        self.project = project  # cross-file facts (pytree base classes in other modules), as `check` builds them
        self._files: dict[str, _FileFacts | str] = {}

    def facts(self, path: str) -> _FileFacts | str:
        """The findings of one user file (all rules), or a one-line reason why there are none."""
        if path in self._files:
            return self._files[path]
        result: _FileFacts | str
        if not path or path.startswith("<"):
            result = f"code in {path or 'an unknown file'} has no file to analyze"
        elif not path.endswith((".py", ".pyi", ".ipynb")) or not os.path.isfile(path):
            result = f"{path}: not a Python source file jaxfix can read"
        else:
            try:
                # a notebook: its joined module, whose lines the notebook's run reported
                source = notebook_source(path) if path.endswith(".ipynb") else Path(path).read_bytes().decode("utf-8")
                config = self.resolver.for_path(path)
                # every rule, preview findings too: a recompile seen at run time is the evidence
                # a preview finding lacked (`Match.shown` says what `check` would show)
                every_rule = replace(config, select=("JAX",), ignore=(), per_file_ignores=(), preview=True)
                file_result = analyze(source, path, every_rule, project=self.project)
                try:
                    tree = ast.parse(source)
                except SyntaxError:
                    tree = None
                result = (
                    _FileFacts(file_result.findings, config, tree, source)
                    if file_result.error is None or file_result.findings
                    else f"{path}: {file_result.error}"
                )
            except (OSError, UnicodeDecodeError, ConfigError, NotebookError) as exc:
                result = f"{path}: {exc}"
            except Exception as exc:  # noqa: BLE001 - a rule's bug must not lose the report of a long run
                result = f"{path}: jaxfix could not analyze it ({type(exc).__name__}: {exc})"
        self._files[path] = result
        return result

    def causes(self, function: Function) -> list[Cause]:
        groups: dict[tuple, Cause] = {}
        for miss in function.retraces:
            site = miss.site
            key = (site.path, site.line, site.column, site.function, miss.kind) if site else (None, miss.kind)
            cause = groups.get(key)
            if cause is None:
                groups[key] = Cause(function, [miss])
            else:
                cause.misses.append(miss)
        result = list(groups.values())
        for cause in result:
            self._join(cause)
        return result

    def _join(self, cause: Cause) -> None:
        miss, function = cause.first, cause.function
        prefixes = FAMILIES.get(miss.kind, ())
        if not prefixes and miss.kind == "static" and miss.site is not None and _a_function_is_static(miss):
            # `eqx.filter_jit(partial(f, ...))` per call: the fresh callable is a static part of
            # equinox's jit call, so JAX names a static argument; a jit-placement finding at the
            # very call site is the fix
            prefixes = SITE_ONLY_FAMILIES
        if not prefixes:
            return
        found: dict[tuple, Match] = {}
        notes: list[str] = []

        def take(path: str, keep) -> None:
            facts = self.facts(os.path.realpath(path) if path and not path.startswith("<") else path)
            if isinstance(facts, str):
                notes.append(facts)
                return
            for finding in facts.findings:
                if finding.code.startswith(prefixes) and keep(finding, facts):
                    key = (finding.path, finding.line, finding.column, finding.code)
                    selected = facts.config.code_selected(finding.code, finding.path)
                    found.setdefault(key, Match(finding, selected, facts.config.preview or not finding.preview))

        def spans(line: int):
            return lambda f, _facts: f.line <= line <= f.end_line

        if miss.site is not None:
            take(miss.site.path, spans(miss.site.line))
        if prefixes is SITE_ONLY_FAMILIES:
            cause.matches = sorted(found.values(), key=lambda m: m.finding.sort_key())
            return
        if function.path:
            take(function.path, spans(function.line))
        if miss.kind in ("pytree", "unknown", "unrecorded"):
            for spot in miss.classes.values():
                if spot:
                    path, start, end = spot
                    take(path, lambda f, _facts, s=start, e=end: s <= f.line <= e)
        if not found and miss.kind == "redefined" and miss.site is not None:
            take(miss.site.path, lambda f, facts: _same_scope_and_named(f, facts, miss.site.line, function.name))
        cause.matches = sorted(found.values(), key=lambda m: m.finding.sort_key())
        if not cause.matches and notes:
            cause.note = notes[0]


def _enclosing(tree: ast.Module, line: int) -> tuple[int, int] | None:
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno is not None:
            if node.lineno <= line <= node.end_lineno and (best is None or node.lineno >= best[0]):
                best = (node.lineno, node.end_lineno)
    return best


def _same_scope_and_named(finding: Finding, facts: _FileFacts, line: int, name: str) -> bool:
    if facts.tree is None:
        return False
    scope = _enclosing(facts.tree, line)
    if scope is None or not (scope[0] <= finding.line <= scope[1]):
        return False
    lines = facts.source.splitlines()
    text = "\n".join(lines[finding.line - 1 : finding.end_line])
    needle = "lambda" if name == "<lambda>" else name
    return needle in text


def involved_files(functions: list[Function]) -> list[str]:
    """The user's source files a join may analyze: definitions, call sites, classes and their bases."""
    paths: list[str] = []
    for f in functions:
        if not f.retraces:
            continue
        paths.append(f.path)
        for miss in f.retraces:
            if miss.site is not None:
                paths.append(miss.site.path)
            paths.extend(miss.class_files)
    return [p for p in dict.fromkeys(paths) if p and not p.startswith("<") and os.path.isfile(p)]


def join_all(functions: list[Function], resolver: ConfigResolver | None = None) -> dict[tuple, list[Cause]]:
    recompiled = [f for f in functions if f.retraces]
    if not recompiled:
        return {}
    from jaxfix.engine.project import build_project_index

    # every rule is consulted, so the cross-file facts are always wanted; unreadable or
    # unparsable files are left out of the index by build_project_index itself
    joiner = Joiner(resolver, build_project_index(involved_files(recompiled)))
    return {f.key: joiner.causes(f) for f in recompiled}
