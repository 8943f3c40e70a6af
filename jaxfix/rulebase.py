"""What a rule is, and the per-file context it reads facts from.

A rule is a class in its own module of `codemods/<family>/`: metadata (one code,
options, VALID and INVALID examples, and a docstring in Ruff's sections) plus
`check(ctx)`, which yields findings with optional fixes. A rule never reads files or prints; everything it knows about the
file comes from `RuleContext`, which parses once and computes analyses lazily so
that rules share them.
"""

from __future__ import annotations

import ast
import inspect
import re
import textwrap
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper

from jaxfix.analysis import astscan, filememo, render
from jaxfix.analysis.names import PREFERRED_IMPORTS, ImportMap
from jaxfix.analysis.statement_text import (
    LONE_LF,
    Rewriter,
    StatementPositions,
    body_index,
    crlf_only,
    dropped_names,
    flat,
    module_positions,
    path_to,
    top_level_lines,
    top_level_spans,
)
from jaxfix.analysis.trace_screen import admits_entered
from jaxfix.analysis.walk import TreeIndex
from jaxfix.edits import edits_between
from jaxfix.model import Code, Edit, Finding, Fix, ImportRequest, Option, Safety  # noqa: F401 (Code, Option: part of the rule API)


class _ReducedImportMap(ImportMap):
    """The imports of a reduced text (the editor's): it keeps every statement holding an import, so
    the bindings are the whole text's; but whether a preferred short name (`jnp`) is free to take
    depends on every name spelled, also in the left-out code, so an answer that asked about one
    spelled there is left undecided (the caller analyses the whole text)."""

    _ctx: "RuleContext | None" = None

    @classmethod
    def of(cls, ctx: "RuleContext") -> "_ReducedImportMap":
        found = ImportMap.from_module(ctx.module)
        names = cls(bindings=found.bindings, requests=found.requests, _module=ctx.module)
        names._ctx = ctx
        return names

    def reference(self, qualname: str):
        spelled, requests = super().reference(qualname)
        if requests and self._ctx is not None:
            parts = qualname.split(".")
            for cut in range(len(parts) - 1, 0, -1):
                preferred = PREFERRED_IMPORTS.get(".".join(parts[:cut]))
                if preferred is not None and self._ctx._elsewhere(preferred[0]):
                    self._ctx.undecided = True
        return spelled, requests


T = TypeVar("T")


def _example_text(code: str) -> str:
    """Examples are written indented inside the rule module; they run as a file of their own."""
    return textwrap.dedent(code).lstrip("\n")


@dataclass(frozen=True)
class Valid:
    """Code the rule must leave alone: a test checks it gives no finding of the rule's code."""

    code: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", _example_text(self.code))


@dataclass(frozen=True)
class Invalid:
    """Code the rule reports. `fixed` is the text after the rule's fixes (unsafe ones included),
    None when the rule offers no automatic fix here; a test checks both, and that fixing is stable."""

    code: str
    fixed: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "code", _example_text(self.code))
        if self.fixed is not None:
            object.__setattr__(self, "fixed", _example_text(self.fixed))


# (text, test -> found): the rules of one text ask in turn; a test is a pattern or a token
_last_searched: tuple[str | None, dict] = (None, {})


@filememo.on_forget
def _forget_text() -> None:
    global _last_searched
    _last_searched = (None, {})


def _tests_of(source: str) -> dict:
    """The answers found so far for `source` (a thread analysing another text meanwhile costs a
    search, never an answer)."""
    global _last_searched
    last = _last_searched
    if last[0] is not source:
        last = _last_searched = (source, {})
    return last[1]


def pattern_found(pattern: re.Pattern[str], source: str) -> bool:
    """`pattern.search(source) is not None`, searched once per text: ten rules share the
    transform-name pattern, and one search of a large file costs more than all their substring
    tests together."""
    found = _tests_of(source)
    if pattern not in found:
        found[pattern] = pattern.search(source) is not None
    return found[pattern]


def pattern_known(pattern: re.Pattern[str], source: str, found: bool) -> None:
    """Record what `pattern_found(pattern, source)` answers, found by a search elsewhere (the
    process that queued the file searched its bytes): no second search of the text here."""
    _tests_of(source)[pattern] = found


def token_found(token: str, source: str) -> bool:
    """`token in source`, tested once per text: the rules' text tests share tokens (`jit` is four
    rules' and the transform-name pattern's), and a token a large file lacks is a scan of all of it."""
    found = _tests_of(source)
    if token not in found:
        found[token] = token in source
    return found[token]


class Rule:
    """Base class. The subclass docstring is the user-facing documentation."""

    name: ClassVar[str]
    codes: ClassVar[tuple[Code, ...]]
    # A file must contain at least one of these substrings for the rule to run at all,
    prefilter: ClassVar[tuple[str, ...]]
    # and, when set, match this pattern (for what a substring cannot pin down, like an import).
    prefilter_pattern: ClassVar[re.Pattern[str] | None] = None  # or what has `search` (`transform_prefilter.WordLed`)
    options: ClassVar[tuple[Option, ...]] = ()
    # The `[tool.jaxfix.<table>]` the options are read from; rules of a family that share an
    # option share the table (default: the rule's name).
    options_table: ClassVar[str | None] = None
    valid: ClassVar[tuple[Valid, ...]] = ()
    invalid: ClassVar[tuple[Invalid, ...]] = ()
    # What differential verification compares the rewrite against: the original "as-written",
    # or the original run "eager" (under jax.disable_jit) when it cannot run under jit at all.
    verify_reference: ClassVar[str] = "as-written"
    # A rule about other rules' findings (unused noqa) gets them through `check_findings`
    # instead of running `check` on the tree.
    sees_findings: ClassVar[bool] = False
    # reads `ctx.project` (facts about the other files of the run), which the CLI then builds
    uses_project: ClassVar[bool] = False
    # reports in traced code: also runs on a file whose functions traced code of another module
    # calls (`ProjectIndex.cross_entries`), past its text test and `could_match` (which see the
    # file alone), screened there by `could_match_in` alone, which by default asks
    # `could_match(tree, entries)` with those functions entered (`trace_screen.admits_entered`);
    # implies `uses_project`
    follows_calls: ClassVar[bool] = False
    # every finding of the rule is shown only in preview mode (`Finding.preview`): a scan whose
    # preview findings nobody reads does not run it (`jaxfix.engine.fixing.preview_read`)
    preview_only: ClassVar[bool] = False

    @classmethod
    def passes_prefilter(cls, source: str) -> bool:
        """The text test before any parse. Must never reject a real match. The pattern goes first:
        most rules share theirs (the transform-name pattern), searched once per text, and a text
        it rejects needs none of their token scans."""
        return (cls.prefilter_pattern is None or pattern_found(cls.prefilter_pattern, source)) and any(
            token_found(token, source) for token in cls.prefilter
        )

    def could_match(self, tree: ast.Module) -> bool:
        """Second, cheaper-than-libcst filter on the stdlib AST. Must never reject a real match."""
        return True

    def could_match_in(self, ctx: "RuleContext") -> bool:
        """Third filter, after `could_match` and before the libcst parse: what the file's path, the
        rule's options and the run's project index (`ctx.path`, `ctx.option`, `ctx.project`, with
        `ctx.tree`) tell. It must never read `ctx.module`, and never reject a real match; the
        facts it computes through `ctx.fact` are the rule's own, shared with `check`. A rule that
        follows calls is screened here with the functions other modules' traced code enters
        (its `could_match` takes them as `entries`)."""
        return admits_entered(ctx, self.could_match) if self.follows_calls else True

    def check(self, ctx: "RuleContext") -> Iterable[Finding]:
        raise NotImplementedError

    def check_findings(
        self,
        source: str,
        path: str,
        findings: list[Finding],
        code_filter: Callable[[str], bool],
        comments: Callable[[], list[tuple[int, int, str]]] | None = None,
    ) -> Iterable[Finding]:
        """For rules with `sees_findings`: the other rules' findings before noqa is applied.
        `comments`, when given, returns the text's comments (`analysis.comments.comments_in`)
        from what the caller kept of them."""
        raise NotImplementedError

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def table(cls) -> str:
        """The config table this rule's options live in."""
        return cls.options_table or cls.name

    @classmethod
    def code_info(cls, code: str) -> Code:
        for info in cls.codes:
            if info.code == code:
                return info
        raise KeyError(code)


class RuleContext:
    """One parse of one file, shared by every rule that runs on it."""

    def __init__(
        self,
        source: str,
        path: str,
        *,
        options: Mapping[str, Mapping[str, Any]] | None = None,
        project: Any = None,
        module: cst.Module | None = None,
        tree: ast.Module | None = None,
        elsewhere: Callable[[str], bool] | None = None,
        quote: Callable[[], str] | None = None,
        edits: bool = True,
    ) -> None:
        self.source = source
        self.path = path
        self.project = project
        self._options = options or {}
        self._module = module
        self._tree = tree
        self._wrapper: MetadataWrapper | None = None
        self._facts: dict[Any, Any] = {}
        self._elsewhere = elsewhere
        self._quote = quote  # the whole file's quote, for a reduced text (`quote`)
        self.quote_used: str | None = None  # the quote a fix asked for (its text depends on it)
        self.names_asked: set[str] = set()
        self.undecided = False
        # build each fix's edits (False: a run that prints only what the fixes are, `rewrite`)
        self.edits = edits

    def release(self) -> None:
        """Drop the facts, once the rules are done: many hold this context (a cycle), which kept
        the file's trees alive until the cyclic collector walked them all (seconds on a
        50,000-line file); dropped here, reference counting frees them at once."""
        self._facts.clear()
        self._wrapper = None

    # -- parsing (each parser at most once) -------------------------------
    @property
    def module(self) -> cst.Module:
        if self._module is None:
            from jaxfix.analysis.cstparse import parse_module

            self._module = parse_module(self.source)
        return self._module

    def set_module(self, module: cst.Module) -> None:
        """The libcst module of `source`, parsed by the caller once some rule needs it."""
        self._module = module

    @property
    def tree(self) -> ast.Module:
        if self._tree is None:
            self._tree = ast.parse(self.source)
        return self._tree

    @property
    def wrapper(self) -> MetadataWrapper:
        if self._wrapper is None:
            self._wrapper = MetadataWrapper(self.module, unsafe_skip_copy=True)
        return self._wrapper

    # -- shared, lazily computed facts -------------------------------------
    def fact(self, key: Any, factory: Callable[["RuleContext"], T]) -> T:
        """Compute `factory(self)` once per file and share it between rules."""
        if key not in self._facts:
            self._facts[key] = factory(self)
        return self._facts[key]

    @property
    def names(self) -> ImportMap:
        if self._elsewhere is not None:
            return self.fact(ImportMap, lambda ctx: _ReducedImportMap.of(ctx))
        return self.fact(ImportMap, _import_map)

    def reference_at(self, qualname: str, line: int) -> tuple[str, tuple[ImportRequest, ...]]:
        """`names.reference` for code a notebook's top level runs at `line`: cells run in order, so
        a module only a later cell imports is not bound there yet, and its import is requested (it
        goes to the first import cell). A DiffeRT notebook imported `jax` first in cell 37; a safe
        `jax.block_until_ready(...)` written in cell 29 raised NameError."""
        spelled, requests = self.names.reference(qualname)
        if requests or self._elsewhere is not None:
            return spelled, tuple(requests)
        from jaxfix.analysis.runs_once import is_notebook_text

        head = spelled.split(".", 1)[0]
        # asked per fix: searching the whole text each time was quadratic in a script of many
        if not self.fact(is_notebook_text, lambda ctx: is_notebook_text(ctx.source)) or self.names.bindings.get(head) != head:
            return spelled, tuple(requests)
        for stmt in astscan.module_level(self.tree.body):  # code that runs as a cell runs, not in a def
            if (
                stmt.lineno < line
                and isinstance(stmt, ast.Import)
                and any((alias.asname or alias.name.split(".", 1)[0]) == head for alias in stmt.names)
            ):
                return spelled, tuple(requests)
        return spelled, (ImportRequest(head, leading=True),)

    @property
    def quote(self) -> str:
        """The quote character for string literals a fix writes: the file's own (`preferred_quote`),
        of the whole file also when this context holds a reduced text (the editor's)."""
        from jaxfix.analysis.codegen import preferred_quote

        if self._quote is not None:
            self.quote_used = self.fact(preferred_quote, lambda ctx: ctx._quote())
        else:
            self.quote_used = self.fact(preferred_quote, _file_quote)
        return self.quote_used

    def literal(self, value: str) -> str:
        """`value` as a string literal in the file's quote style."""
        from jaxfix.analysis.codegen import string_literal

        return string_literal(value, self.quote)

    @property
    def tree_index(self) -> TreeIndex:
        """Every node's parent and the module's nodes by type, from one pass (`walk.TreeIndex`)."""
        return self.fact(TreeIndex, lambda ctx: TreeIndex(ctx.module))

    @property
    def parents(self) -> dict[cst.CSTNode, cst.CSTNode]:
        return self.tree_index.parents

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(node)

    def top_level_statement(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The statement of `module.body` that holds `node` (None for the module and its header)."""
        parent_of, module = self.parents.get, self.module  # one lookup per level: a parent is never None
        up = parent_of(node)
        while up is not None:
            if up is module:
                return node if isinstance(node, cst.BaseStatement) else None  # not a header/footer line
            node, up = up, parent_of(up)
        return None

    def position(self, node: cst.CSTNode) -> CodeRange:
        """Where `node` is, computed from its top-level statement alone.

        Positions of the whole module cost a full position-tracking render (~0.6 s on a
        2,000-line file); a finding needs only its own statement's, shifted by the
        line that statement starts on.
        """
        known = self.fact(RuleContext.position, lambda ctx: {})  # asked again and again per node
        found = known.get(node)
        if found is None:
            found = known[node] = self._position(node)
        return found

    def _position(self, node: cst.CSTNode) -> CodeRange:
        top = self.top_level_statement(node)
        spans = self.fact(top_level_spans, top_level_spans)
        if top is None or not spans:
            return self.fact(module_positions, module_positions)[node]
        start_line = self.fact(top_level_lines, top_level_lines)[top]
        return self.fact(StatementPositions, StatementPositions).shifted(top, node, start_line - 1)

    def top_level_index(self, node: cst.CSTNode) -> int:
        """`list(self.module.body).index(node)` (ValueError when `node` is not a top-level
        statement), from a table built once per file: a search of the body per finding made a
        file with thousands of findings quadratic (issue #33 item 1)."""
        index = self.fact(body_index, body_index).get(id(node))
        if index is None:
            raise ValueError(f"{type(node).__name__} is not a top-level statement")
        return index

    def is_top_level(self, node: cst.CSTNode) -> bool:
        """`node in self.module.body`, from the same table."""
        return id(node) in self.fact(body_index, body_index)

    def keyword_line(self, node: cst.ClassDef | cst.FunctionDef) -> int:
        """The line of a top-level definition's `class`/`def` keyword (ast's `lineno`), read from
        the text: `position` renders the whole statement, which on a large class costs more than
        the rest of a rule's check. Nested definitions fall back to `position`."""
        spans = self.fact(top_level_spans, top_level_spans)
        if not self.is_top_level(node) or not spans:
            return self.position(node.name).start.line
        start, end = spans[node]
        keyword = "class" if isinstance(node, cst.ClassDef) else "def"
        found = re.compile(rf"^[ \t]*(?:async[ \t]+)?{keyword}[ \t]+{node.name.value}\b", re.M).search(
            self.source, start, end
        )
        if found is None:
            return self.position(node.name).start.line
        return self.fact(top_level_lines, top_level_lines)[node] + self.source.count("\n", start, found.start())

    def option(self, rule: type[Rule] | Rule, name: str) -> Any:
        for opt in rule.options:
            if opt.name == name:
                return self._options.get(rule.table(), {}).get(name, opt.default)
        raise KeyError(f"{rule.name} has no option {name!r}")

    # -- building results ----------------------------------------------------
    def fresh_name(self, stem: str, taken: set[str]) -> str:
        """`stem`, else `stem_2`, `stem_3`, ...: the first not in `taken`, which it then joins.

        Every name asked about is recorded, because a fix's spelling depends on code far from
        it: an incremental analysis reuses the fix only while no other code starts spelling
        one. On a reduced text a name spelled in the left-out code cannot be decided here
        (`undecided`; the caller analyses the whole text instead).
        """
        name, n = stem, 2
        while self._is_taken(name, taken):
            name, n = f"{stem}_{n}", n + 1
        taken.add(name)
        return name

    def _is_taken(self, name: str, taken: set[str]) -> bool:
        self.names_asked.add(name)
        if name in taken:
            return True
        if self._elsewhere is not None and self._elsewhere(name):
            self.undecided = True
            return True
        return False

    def finding(
        self, rule: type[Rule] | Rule, code: str, node: cst.CSTNode, message: str, fix: Fix | None = None
    ) -> Finding:
        rng = self.position(node)
        return Finding(
            code=code,
            name=rule.code_info(code).name,
            path=self.path,
            line=rng.start.line,
            column=rng.start.column + 1,
            end_line=rng.end.line,
            end_column=rng.end.column + 1,
            message=message,
            fix=fix,
        )

    def rewrite(
        self,
        title: str,
        safety: Safety,
        *,
        replace: Mapping[cst.CSTNode, cst.CSTNode | cst.RemovalSentinel] | None = None,
        insert_before: Mapping[cst.CSTNode, list[cst.BaseStatement]] | None = None,
        insert_after: Mapping[cst.CSTNode, list[cst.BaseStatement]] | None = None,
        imports: Iterable[ImportRequest] = (),
    ) -> Fix:
        """A fix built by replacing nodes of this file's tree, turned into minimal text edits.

        In a run that prints only what the fixes are (`edits` False: a text `check`), the edits
        are not built (`Fix.built`): rendering the new code and diffing it cost 1.1 s of CPU of the
        14 s check of a 50,000-line file with 5,880 fixes. The rule's decision (the title, safety and
        imports, all given here) is the same either way."""
        if not self.edits:
            return Fix(title=title, safety=safety, imports=tuple(imports), built=False)
        rewriter = Rewriter(replace or {}, insert_before or {}, insert_after or {})
        targets = [*(replace or {}), *(insert_before or {}), *(insert_after or {})]
        edits = self._rewrite_statements(rewriter, targets)
        if edits is None:
            edits = edits_between(self.source, self._same_newlines(self.module.visit(rewriter).code))
        new_nodes = [*(replace or {}).values(), *flat(insert_before), *flat(insert_after)]
        requests = self.names.requests
        dropped = dropped_names(replace or {}, new_nodes, requests)
        unused = tuple(requests[n] for n in sorted(dropped))
        return Fix(title=title, safety=safety, edits=edits, imports=tuple(imports), unused_imports=unused)

    def _rewrite_statements(self, rewriter: "Rewriter", targets: list[cst.CSTNode]):
        """Edits from transforming only the top-level statements that hold the targets.

        Transforming and diffing the whole module costs about a second per fix on a
        2,000-line file, quadratic in a file with many fixes; the few functions or classes
        a fix touches are a small fraction of that. The text of each top-level statement
        is the module's own rendering, so the result is the same text. Which statement
        holds a target is read from the positions the findings need anyway. None
        (transform the whole module) when a target cannot be placed.
        """
        spans = self.fact(top_level_spans, top_level_spans)
        if not spans or not targets:
            return None
        tops: dict[cst.CSTNode, list[cst.CSTNode]] = {}
        for node in targets:
            top = self.top_level_statement(node)
            if top is None or top not in spans:
                return None
            tops.setdefault(top, []).append(node)
        parents, path = self.parents, None
        edits: list[Edit] = []
        for top, inside in tops.items():
            start, end = spans[top]
            new_text = render.spliced(
                self.module,
                top,
                self.source[start:end],
                self.fact(StatementPositions, StatementPositions)(top),
                parents,
                rewriter.replace,
                rewriter.before,
                rewriter.after,
                inside,
            )
            if new_text is None:
                new_text = self._transformed(rewriter, top, path := path or path_to(targets, parents))
            new_text = self._same_newlines(new_text)
            edits.extend(
                Edit(e.start + start, e.end + start, e.text) for e in edits_between(self.source[start:end], new_text)
            )
        return tuple(sorted(edits, key=lambda e: (e.start, e.end)))

    def _transformed(self, rewriter: "Rewriter", top: cst.CSTNode, path: set[int]) -> str:
        """The text of `top` transformed by `rewriter`, visiting only the nodes on `path` (the
        targets and the nodes above them): the rest is rendered as it is, where visiting it would
        rebuild every node unchanged."""
        rewriter.path = path
        result = rewriter.whole(top)
        if result is None:
            result = top.visit(rewriter)
        if isinstance(result, cst.RemovalSentinel):
            return ""
        if isinstance(result, cst.FlattenSentinel):
            return "".join(render.code_of(self.module, node) for node in result.nodes)
        return render.code_of(self.module, result)

    def _same_newlines(self, text: str) -> str:
        """In a CRLF-only file, the CRLF of new text too: a rule that builds a statement from text
        (`cst.parse_statement("...\\n")`) around the file's own code gets its newline stored as an
        explicit LF, which would write a lone LF into the file."""
        if self.fact(crlf_only, crlf_only):
            return LONE_LF.sub("\r\n", text)
        return text

    def manual(self, title: str) -> Fix:
        return Fix(title=title, safety=Safety.MANUAL)


def _import_map(ctx: RuleContext) -> ImportMap:
    """The file's imports, its spelled names read from the context's `tree_index`."""
    return ImportMap.from_module(ctx.module, name_nodes=lambda: ctx.tree_index.of_type(cst.Name))


def _file_quote(ctx: RuleContext) -> str:
    """`preferred_quote` of the context's file, counted on its string tokens (`text_quote_counts`,
    the same counts): a visit of the whole libcst module cost 6x as much, 0.3 s on a 5,000-line
    file with findings (issue #33 item 1)."""
    from jaxfix.analysis.codegen import preferred_quote, quote_of, text_quote_counts

    counts = text_quote_counts(ctx.source)
    return preferred_quote(ctx.module) if counts is None else quote_of(*counts)
