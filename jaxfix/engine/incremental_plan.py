"""The plan of an incremental analysis (`incremental`): a text cut into chunks and groups
(`Plan`), the reduced text that keeps some groups and turns the other statements into
placeholders of the same lines and length (`placeholder_text`; its libcst module assembled from
chunks parsed once), what a group's findings depend on (`Plan.key`), and each finding kept
relative to its chunks (`Kept`, `Entry`) so that it can be placed again after an edit. `Memo`
keeps, per chunk text, what costs a parse or a pass of the tokenizer.
"""

from __future__ import annotations

import ast
import bisect
import functools
import io
import re
import tokenize
from dataclasses import dataclass, field, replace

import libcst as cst

from jaxfix.analysis.chunks import (
    Chunk,
    ChunkNames,
    chunk_names,
    components,
    default_indent,
    first_newline,
    line_starts,
    split_chunks,
)
from jaxfix.analysis.codegen import preferred_quote, quote_counts, quote_of, string_token_quotes
from jaxfix.analysis.comments import Comment, comments_in
from jaxfix.analysis.cstparse import parse_module
from jaxfix.analysis.pytrees import ast_statements
from jaxfix.engine.chunkparse import ParsedChunk, assemble, parse_chunk
from jaxfix.engine.fixing import AnalysisError, RawScan
from jaxfix.model import Edit, Finding


@dataclass(frozen=True)
class Kept:
    """A finding with its places relative to the chunks of its group: (chunk in group, offset)."""

    finding: Finding
    chunk: int
    line: int  # lines after the chunk's first line (`Chunk.line`, its leading comments included)
    # (chunk, start, end) of each fix edit: the chunk's place in the group, or for an edit in a chunk
    # holding imports (a definition hoisted after the imports it needs), -1 - its place among them
    edits: tuple[tuple[int, int, int], ...]


@dataclass
class Entry:
    kept: list[Kept]
    names: dict[str, tuple[str, ...]]  # fresh name a fix asked about -> outside chunks spelling it
    # chunk holding imports (its place among them) an edit lies in -> the text of the chunk after it
    anchors: dict[int, str | None] = field(default_factory=dict)
    quote: str | None = None  # the file's quote, when a fix wrote a string literal with it


@dataclass
class Memo:
    """Per chunk text, what costs a parse or a rewrite: only the current document's texts are kept."""

    _names: dict[str, ChunkNames | None] = field(default_factory=dict)
    _placeholders: dict[tuple[str, bool], str] = field(default_factory=dict)
    _parsed: dict[tuple, ParsedChunk | None] = field(default_factory=dict)
    _comments: dict[str, tuple[list[Comment], bool]] = field(default_factory=dict)
    _quotes: dict[str, tuple[int, int] | None] = field(default_factory=dict)
    _imports: dict[str, bool] = field(default_factory=dict)
    _token_quotes: dict[str, tuple[int, int]] = field(default_factory=dict)
    _spells: dict[str, dict[str, bool]] = field(default_factory=dict)  # text -> name -> spelled in it

    def renewed(self, chunks: list[Chunk]) -> "Memo":
        texts = {c.text for c in chunks}
        return Memo(
            {t: n for t, n in self._names.items() if t in texts},
            {k: p for k, p in self._placeholders.items() if k[0] in texts},
            {k: p for k, p in self._parsed.items() if k[0] in texts},
            {t: c for t, c in self._comments.items() if t in texts},
            {t: q for t, q in self._quotes.items() if t in texts},
            {t: i for t, i in self._imports.items() if t in texts},
            {t: q for t, q in self._token_quotes.items() if t in texts},
            {t: n for t, n in self._spells.items() if t in texts},
        )

    def spells(self, text: str, name: str) -> bool:
        """Whether the chunk text `text` spells `name` (as a whole word)."""
        known = self._spells.setdefault(text, {})
        found = known.get(name)
        if found is None:
            found = known[name] = spelling(name).search(text) is not None
        return found

    def has_import(self, text: str, tree: ast.Module, chunk: Chunk) -> bool:
        """Whether the statements of `chunk` (of `tree`) hold an import statement at any depth."""
        if text not in self._imports:
            # an import statement spells `import` (the text test settles most chunks)
            self._imports[text] = "import" in text and any(
                isinstance(node, (ast.Import, ast.ImportFrom))
                for k in chunk.statements
                for node in ast_statements([tree.body[k]])
            )
        return self._imports[text]

    def comments(self, text: str) -> tuple[list[Comment], bool]:
        if text not in self._comments:
            if "#" not in text:  # a comment starts with `#`: none to find, nothing to tokenize
                return [], True
            self._tokenize(text)
        return self._comments[text]

    def _tokenize(self, text: str) -> None:
        """One pass of the tokenizer over a chunk for both what is memoised from it: its comments
        (`comments_in`) and its strings' quotes (`text_quote_counts`)."""
        found: list[Comment] = []
        single = double = 0
        quotes_ok = True
        try:
            for token in tokenize.generate_tokens(io.StringIO(text).readline):
                if token.type == tokenize.COMMENT:
                    found.append((token.start[0], token.start[1], token.string))
                elif token.type == tokenize.STRING and quotes_ok:
                    try:
                        counted = string_token_quotes(token.string)
                    except Exception:  # noqa: BLE001 - an f-string libcst rejects: count this chunk otherwise
                        quotes_ok = False
                    else:
                        single, double = single + counted[0], double + counted[1]
        except (tokenize.TokenError, SyntaxError, IndentationError):
            self._comments[text] = (found, False)
            return
        self._comments[text] = (found, True)
        if quotes_ok:
            self._token_quotes[text] = (single, double)

    def names(self, text: str, statements: list[ast.stmt]) -> ChunkNames | None:
        if text not in self._names:
            self._names[text] = chunk_names(text, statements)
        return self._names[text]

    def placeholder(self, text: str, code_at: int, first: bool) -> str:
        """The statement part of a chunk (from `code_at`) as `placeholder_text` (`first`: the
        module's first chunk)."""
        key = (text, first)
        if key not in self._placeholders:
            self._placeholders[key] = placeholder_text(text[code_at:], first)
        return self._placeholders[key]

    def counted(self, text: str) -> tuple[int, int] | None:
        """The quote counts of a chunk text, if they were counted already (else None)."""
        found = self._quotes.get(text)
        return found if found is not None else self._token_quotes.get(text)

    def quotes(self, plan: "Plan", i: int, config: cst.PartialParserConfig) -> tuple[int, int] | None:
        """`quote_counts` of chunk `i`'s statements (None when it cannot be parsed alone)."""
        text = plan.chunks[i].text
        if text not in self._quotes:
            if text not in self._comments:
                self._tokenize(text)  # the tokenizer's count: a tenth of a libcst parse
            counts = self._token_quotes.get(text)
            if counts is None:
                parsed = self.parsed(plan, i, True, config)
                counts = (
                    None
                    if parsed is None
                    else tuple(map(sum, zip((0, 0), *(quote_counts(s) for s in parsed.statements))))
                )
            self._quotes[text] = counts
        return self._quotes[text]

    def seed(self, parsed: list[tuple[str, cst.PartialParserConfig, ParsedChunk]]) -> None:
        """Take the chunks a whole text was parsed in (`RawScan.chunks`) as parsed here: each is
        what `parsed` gives a kept chunk of that text under that config (the same `parse_chunk`).
        The fix loop's rescans then parse only the chunks a round changed, not their unchanged
        neighbours and imports (a quarter of what the rescans parsed on the generated files)."""
        for text, config, chunk in parsed:
            self._parsed.setdefault((text, True, config.default_indent, config.default_newline, False), chunk)

    def parsed(self, plan: "Plan", i: int, kept: bool, config: cst.PartialParserConfig) -> ParsedChunk | None:
        """Chunk `i` parsed alone, as itself or (not `kept`) as its placeholder."""
        chunk = plan.chunks[i]
        first = not kept and i == 0
        key = (chunk.text, kept, config.default_indent, config.default_newline, first)
        if key not in self._parsed:
            code_at = chunk.code_start - chunk.start
            text = chunk.text if kept else chunk.text[:code_at] + self.placeholder(chunk.text, code_at, first)
            self._parsed[key] = parse_chunk(text, code_at, config)
        return self._parsed[key]



class Plan:
    """One text cut into chunks and groups; None groups when it cannot be cut (analyse it whole)."""

    def __init__(self, source: str, tree, memo: "Memo") -> None:
        self.source = source
        self.tree = tree
        self.starts = line_starts(source)
        self.chunks: list[Chunk] = split_chunks(source, tree, self.starts)
        self.memo = memo.renewed(self.chunks)
        names = [self.memo.names(c.text, [tree.body[k] for k in c.statements]) for c in self.chunks]
        self.groups: list[list[int]] | None = None
        self._spellers: dict[str, list[int]] = {}
        self._quote: str | None = None
        if source.startswith("\ufeff") or any(n is None for n in names):
            return
        self.imports_only = [n.imports_only for n in names]
        # Every chunk holding an import, inside a function too: the imports a fix spells its names
        # through (`ImportMap`, which reads them all) are the whole text's, so a reduced text keeps
        # them all, and every analysis depends on their texts.
        self.import_chunks = [
            i for i, c in enumerate(self.chunks) if self.imports_only[i] or self.memo.has_import(c.text, tree, c)
        ]
        self.groups = components(names)
        self.indent = default_indent(source, tree, self.starts)
        imports = tuple(self.chunks[i].text for i in self.import_chunks)
        self.context = (self.indent, first_newline(source), imports)
        self._lines = [c.line for c in self.chunks]

    def comments(self) -> list[Comment]:
        """The text's comments, tokenized chunk by chunk (a chunk starts where no bracket or
        string is open, at column 0), as `comments_in` of the whole text gives them."""
        found: list[Comment] = []
        for chunk in self.chunks:
            inside, complete = self.memo.comments(chunk.text)
            if not complete:
                return comments_in(self.source)[0]
            found += [(row + chunk.line - 1, col, text) for row, col, text in inside]
        if self.chunks:
            last = self.chunks[-1]
            inside, complete = comments_in(self.source[last.end :])
            if not complete:
                return comments_in(self.source)[0]
            found += [(row + last.last_line, col, text) for row, col, text in inside]
            return found
        return comments_in(self.source)[0]

    def quote(self) -> str:
        """The whole text's `preferred_quote` (computed once per plan: `_valid` asks per group)."""
        if self._quote is None:
            self._quote = self._preferred_quote()
        return self._quote

    def _preferred_quote(self) -> str:
        """The whole text's `preferred_quote`, for fixes built on a reduced text (whose left-out
        statements hold strings too): summed over the chunks, each counted once per text.

        A chunk not counted yet is first only bounded: each string it could count for holds two
        of its quote characters. Most texts write one style so much more than the other that the
        bounds decide, and the chunks are tokenized only when they do not."""
        single = double = 0
        most_single = most_double = 0
        uncounted = []
        for i, chunk in enumerate(self.chunks):
            counts = self.memo.counted(chunk.text)
            if counts is None:
                uncounted.append(i)
                most_single += chunk.text.count("'") // 2
                most_double += chunk.text.count('"') // 2
            else:
                single, double = single + counts[0], double + counts[1]
        if single + most_single <= double:
            return '"'
        if single > double + most_double:
            return "'"
        config = cst.PartialParserConfig(default_indent=self.indent, default_newline=self.context[1])
        for i in uncounted:
            counts = self.memo.quotes(self, i, config)
            if counts is None:
                return preferred_quote(parse_module(self.source))
            single, double = single + counts[0], double + counts[1]
        return quote_of(single, double)

    def left_out(self, keep: set[int]) -> list[tuple[int, int]]:
        """The runs of chunks outside `keep` (first, last), each one placeholder of a reduced text.

        One placeholder for a run, not one per chunk: the rules walk the reduced module, and on
        a first analysis most of its statements were placeholders (230 of 278 on the 2,000 lines
        of `benchmarks/lsp_latency.py`, whose first analysis one per run took from 156 to 121 ms
        of CPU time). The left-out code
        between the run's first and last statements (comments and blank lines included) is
        spaces either way; only what comes before the run's first statement stays as it was."""
        runs: list[tuple[int, int]] = []
        start, count = None, len(self.chunks)
        for i in range(count):
            if i in keep:
                if start is not None:
                    runs.append((start, i - 1))
                    start = None
            elif start is None:
                start = i
        if start is not None:
            runs.append((start, count - 1))
        return runs

    def placeholder(self, first: int, last: int | None = None) -> str:
        """The placeholder of chunks `first` to `last` (default: `first` alone), from the first's
        statements to the end of the last."""
        chunk = self.chunks[first]
        if last is None or last == first:
            return self.memo.placeholder(chunk.text, chunk.code_start - chunk.start, first == 0)
        return placeholder_text(self.source[chunk.code_start : self.chunks[last].end], first == 0)

    def module(self, text: str, keep: set[int]) -> cst.Module:
        """The libcst module of `text`: this plan's text with the runs of chunks outside `keep`
        replaced by placeholders (`left_out`), assembled from chunks parsed before when it can be."""
        if self.groups is not None:
            config = cst.PartialParserConfig(default_indent=self.indent, default_newline=self.context[1])
            runs = dict(self.left_out(keep))
            pieces, i = [], 0
            while i < len(self.chunks):
                last = runs.get(i, i)
                if last == i:
                    pieces.append(self.memo.parsed(self, i, i in keep, config))
                else:
                    chunk = self.chunks[i]
                    code_at = chunk.code_start - chunk.start
                    pieces.append(parse_chunk(chunk.text[:code_at] + self.placeholder(i, last), code_at, config))
                i = last + 1
            parsed = _distinct(pieces)
            if all(p is not None for p in parsed):
                end = self.chunks[-1].end
                module = assemble(
                    parsed,
                    self.source[end:],
                    indent=self.indent,
                    newline=self.context[1],
                    has_trailing_newline=self.source.endswith(("\n", "\r")),
                )
                if module is not None:
                    return module
        return parse_module(text)

    def reduced_module(self, text: str, keep: set[int]) -> cst.Module:
        """`module` of a reduced text, which must lay code out as the whole text does.

        Generated code takes the module's default indent, which libcst detects from the first
        indented block; when the reduced text is parsed whole and that block is a placeholder,
        a later block's indent is found instead, and the fixes would differ from a full analysis.
        """
        module = self.module(text, keep)
        if module.default_indent != self.indent or module.default_newline != self.context[1]:
            raise AnalysisError("the reduced text lays out code differently from the whole text")
        return module

    def key(self, group: list[int]) -> tuple:
        """What a group's findings depend on: its texts, the imports, and the statement before
        each of its chunks (a hoisted definition's blank lines follow black's rule for what
        precedes it)."""
        before = tuple(self.chunks[i - 1].text if i else None for i in group)
        return (self.context, tuple(self.chunks[i].text for i in group), before)

    def kept(self, todo: set[int]) -> set[int]:
        """Chunks a reduced text keeps for groups `todo`: theirs, the ones before them, the chunks
        holding imports, and the chunk after each of those (what follows code a fix inserts after
        imports)."""
        chunks = {i for g in todo for i in self.groups[g]}
        imports = set(self.import_chunks)
        after = {i + 1 for i in imports if i + 1 < len(self.chunks)}
        return chunks | {i - 1 for i in chunks if i} | imports | after

    def after_import(self, j: int) -> str | None:
        """The text of the chunk after the `j`-th chunk holding imports (None: it is the last chunk)."""
        i = self.import_chunks[j] + 1
        return self.chunks[i].text if i < len(self.chunks) else None

    def _anchor(self, k: int, group: list[int]) -> int:
        """The chunk an edit's place `k` (`Kept.edits`) is relative to."""
        return group[k] if k >= 0 else self.import_chunks[-1 - k]

    # -- where things are --------------------------------------------------
    def chunk_of_line(self, line: int) -> int | None:
        i = bisect.bisect_right(self._lines, line) - 1
        return i if i >= 0 and line <= self.chunks[i].last_line else None

    def chunk_of_edit(self, edit: Edit, group: list[int], own: int) -> int | None:
        """The position in `group` of the chunk holding all of `edit`, if one does.

        An insertion where two chunks meet goes with the finding's own chunk if it is one of
        them (code hoisted in front of its function stays in front of it), else the later.
        """
        for k in [group.index(own), *range(len(group))]:
            chunk = self.chunks[group[k]]
            if chunk.start <= edit.start and edit.end <= chunk.end and (edit.start < chunk.end or group[k] == own):
                return k
        for j, i in enumerate(self.import_chunks):
            chunk = self.chunks[i]
            if chunk.start <= edit.start and edit.end <= chunk.end:
                return -1 - j
        return None

    def strays(self, findings: list[Finding], groups: list[list[int]]) -> bool:
        """Whether a finding (or an edit of its fix) lies outside the group it belongs to."""
        group_of = {i: group for group in groups for i in group}
        for finding in findings:
            chunk = self.chunk_of_line(finding.line)
            group = group_of.get(chunk)
            if group is None or self._relative(finding, chunk, group) is None:
                return True
        return False

    def _relative(self, finding: Finding, chunk: int, group: list[int]) -> Kept | None:
        if finding.end_line > self.chunks[chunk].last_line:
            return None
        edits = []
        for edit in finding.fix.edits if finding.fix is not None else ():
            k = self.chunk_of_edit(edit, group, chunk)
            if k is None:
                return None
            start = self.chunks[self._anchor(k, group)].start
            edits.append((k, edit.start - start, edit.end - start))
        return Kept(finding, group.index(chunk), finding.line - self.chunks[chunk].line, tuple(edits))

    def place(self, kept: Kept, group: list[int]) -> Finding:
        """A kept finding moved to where its chunks are now."""
        first = self.chunks[group[kept.chunk]].line
        finding = kept.finding
        moved = replace(finding, line=first + kept.line, end_line=first + kept.line + finding.end_line - finding.line)
        if finding.fix is None or not finding.fix.edits:
            return moved
        edits = tuple(
            Edit(
                self.chunks[self._anchor(k, group)].start + start,
                self.chunks[self._anchor(k, group)].start + end,
                edit.text,
            )
            for (k, start, end), edit in zip(kept.edits, finding.fix.edits)
        )
        return replace(moved, fix=replace(finding.fix, edits=edits))

    def entries(self, raw: RawScan, analysed: list[tuple[tuple, list[int]]]) -> dict[tuple, Entry]:
        """Entries for the analysed groups; none when a finding cannot be placed relative to them."""
        group_of = {i: (key, group) for key, group in analysed for i in group}
        kept: dict[tuple, list[Kept]] = {key: [] for key, _ in analysed}
        for finding in raw.findings:
            owner = group_of.get(self.chunk_of_line(finding.line))
            relative = None if owner is None else self._relative(finding, self.chunk_of_line(finding.line), owner[1])
            if relative is None:
                return {}
            kept[owner[0]].append(relative)
        return {
            key: Entry(
                kept[key],
                {name: self.spellers(name, group) for name in raw.names_asked},
                {-1 - k: self.after_import(-1 - k) for found in kept[key] for k, _, _ in found.edits if k < 0},
                raw.quote_used,
            )
            for key, group in analysed
        }

    def with_footer_owners(self, todo: set[int]) -> set[int]:
        """`todo` plus the groups of left-out chunks whose trailing indented comments libcst
        would give to them.

        Indented comment lines after a block belong to the block (its footer); after a
        placeholder they would belong to the next statement instead, moving where that
        statement's text starts and so where its fixes insert code. Those (rare) groups are
        analysed too.
        """
        group_of = {i: g for g, group in enumerate(self.groups) for i in group}
        while True:
            keep = self.kept(todo)
            owners = {
                group_of[i]
                for i in range(len(self.chunks) - 1)
                if i not in keep
                and i + 1 in keep
                and _INDENTED.search(self.source, self.chunks[i].end, self.chunks[i + 1].code_start)
            }
            if owners <= todo:
                return todo
            todo = todo | owners

    def spellers(self, name: str, group: list[int]) -> tuple[str, ...]:
        """Texts of the chunks outside `group` that spell `name` (what a fresh name depends on)."""
        if name not in self._spellers:
            # Chunk by chunk, each text searched once per name (an edit changes one): a chunk
            # starts a line and ends one, so a whole-word match in the text lies in one chunk.
            spells = self.memo.spells
            self._spellers[name] = [i for i, chunk in enumerate(self.chunks) if spells(chunk.text, name)]
        inside = set(group)
        return tuple(sorted(self.chunks[i].text for i in self._spellers[name] if i not in inside))


def _distinct(parsed: list[ParsedChunk | None]) -> list[ParsedChunk | None]:
    """`parsed` with every repeat of a chunk (the memo gives equal texts one parse) deep-cloned.

    Analyses key facts on node identity (parents, positions, top-level spans): a node object at
    two places of one module would take the place of the last, and the first copy's findings
    would be reported at the second's lines, or lost."""
    seen: set[int] = set()
    out: list[ParsedChunk | None] = []
    for chunk in parsed:
        if chunk is not None and id(chunk) in seen:
            chunk = ParsedChunk(
                tuple(line.deep_clone() for line in chunk.leading), tuple(s.deep_clone() for s in chunk.statements)
            )
        elif chunk is not None:
            seen.add(id(chunk))
        out.append(chunk)
    return out


@functools.lru_cache(maxsize=256)
def spelling(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<!\w){re.escape(name)}(?!\w)")


_INDENTED = re.compile(r"^[ \t\f]", re.MULTILINE)  # a line starting with blanks, comment or not


def placeholder_text(text: str, first: bool = False) -> str:
    """`text` as one statement of the same lines and length: `0`, a triple-quoted string or
    `(` ... `)`, the rest spaces.

    A string spanning the lines is one token, which libcst parses in half the time of the blank
    lines of a parenthesised placeholder (most of a first analysis's placeholders are functions
    of many lines); it needs three characters on its first and last lines, and is never the
    module's `first` statement (a string there would be its docstring, after which fixes insert
    their imports)."""
    lines = [" " * len(body) + ending for body, ending in _LINE.findall(text) if body or ending]
    if len(lines) == 1:
        return "0" + lines[0][1:]
    last = len(lines[-1].rstrip("\r\n"))
    if not first and len(lines[0].rstrip("\r\n")) >= 3 and last >= 3:
        lines[0] = _QUOTES + lines[0][3:]
        lines[-1] = lines[-1][: last - 3] + _QUOTES + lines[-1][last:]
        return "".join(lines)
    lines[0] = "(" + lines[0][1:]
    lines[-1] = ")" + lines[-1][1:]
    return "".join(lines)


_LINE = re.compile(r"([^\r\n]*)(\r\n|\r|\n|$)")
_QUOTES = '"' * 3
