"""Jupyter notebooks as one analysable module, with a map back to (cell, line, column).

A notebook's code cells are joined, in order, into the text `pipeline.analyze` reads, one
jupytext "percent" marker line (`# %% jaxfix: cell N`) between two cells. IPython syntax
(`%matplotlib`, `!pip`, `?obj`, `x = !ls`, `%%time` headers) is masked by black's own masking
(`black.handle_ipynb_magics`, what `black[jupyter]` formats notebooks with); timing magics at
the start of a line are written as jupytext writes magics, commented out (`# %timeit f(x)`), so
the timing rule (JAX504) can read them. A cell is taken only when unmasking gives back its
every byte; one that does not parse, or holds IPython input the masking cannot keep as written,
is one error naming the cell, and the rest is still checked. Non-Python cells (`%%bash`) are
left out.

Fixes come back as new cell sources, split at the markers; the file is rewritten by replacing
only those cells' `source` values in the original JSON text (`patch_sources`), so outputs,
metadata, key order and indentation stay as they were. nbformat reads and validates.
"""

from __future__ import annotations

import ast
import bisect
import difflib
import json
import re
from dataclasses import dataclass, field, replace

from jaxfix.model import FileResult, Finding

SUFFIX = ".ipynb"
_MARK = "# %% jaxfix: cell {}"
_MARK_LINE = re.compile(r"^# %% jaxfix: cell (\d+)$", re.MULTILINE)
# a timing magic at the start of a line (line or cell magic), and its commented form
_TIMING = re.compile(r"%%?time(it)?(\s|$)")
_COMMENTED_TIMING = re.compile(r"^# (%%?time(?:it)?(?:\s.*)?)$")


class NotebookError(Exception):
    """A notebook that cannot be read or written back; the message is one line."""


def is_notebook(path: str) -> bool:
    return str(path).endswith(SUFFIX)


@dataclass
class Cell:
    """One code cell: where it is in the notebook and how it reads in the joined module."""

    index: int  # in the notebook's cells (markdown ones counted): "cell index+1" for people
    source: str  # as in the file
    lines: list[str]  # its lines in the module (masked); blank lines for a cell left out
    replacements: list = field(default_factory=list)  # black's (mask, original) pairs
    commented: bool = False  # timing magics written as `# %timeit ...`
    problem: str | None = None  # why the cell was left out as an error
    kept: bool = True  # False: left out of the module (blank lines there), as an error or not Python
    exact: dict[str, str] = field(default_factory=dict)  # magic lines black gives back changed -> as written


@dataclass
class NotebookModule:
    """The joined module of a notebook's code cells and how to map its lines back."""

    text: str
    cells: list[Cell]
    errors: list[str]

    def starts(self, text: str | None = None) -> list[int]:
        """The 1-based module line each code cell starts at, in `text` (default: the module's)."""
        text = self.text if text is None else text
        starts = [1]
        for match in _MARK_LINE.finditer(text):
            starts.append(text.count("\n", 0, match.start()) + 2)
        return starts

    def locate(self, line: int, column: int, starts: list[int], lines: list[str]) -> tuple[int, int, int]:
        """(cell number, line in the cell, column) of a module position; `lines` are the module's."""
        j = max(0, bisect.bisect_right(starts, line) - 1)
        j = min(j, len(self.cells) - 1)
        cell = self.cells[j]
        in_cell = max(1, line - starts[j] + 1)
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        if cell.commented and _COMMENTED_TIMING.match(text.rstrip("\r\n")):
            column = max(1, column - 2)
        return cell.index + 1, in_cell, column

    def place(self, findings: list[Finding], text: str | None = None) -> list[Finding]:
        """`findings` (at lines of the module `text`) at their cells' lines."""
        text = self.text if text is None else text
        starts, lines = self.starts(text), text.splitlines()
        placed = []
        for f in findings:
            cell, line, column = self.locate(f.line, f.column, starts, lines)
            end_cell, end_line, end_column = self.locate(f.end_line, f.end_column, starts, lines)
            if end_cell != cell:
                end_line, end_column = line, column
            placed.append(replace(f, line=line, column=column, end_line=end_line, end_column=end_column, cell=cell))
        return placed

    def sources_of(self, text: str) -> dict[int, str]:
        """The new source of each cell that `text` (the fixed module) changed, by notebook index."""
        marks = [int(m.group(1)) for m in _MARK_LINE.finditer(text)]
        if marks != [c.index + 1 for c in self.cells[1:]]:
            raise NotebookError("a fix crossed a cell boundary; not applied")
        parts = _MARK_LINE.split(text)[::2]  # the texts between the markers
        changed: dict[int, str] = {}
        for k, (cell, part) in enumerate(zip(self.cells, parts)):
            part = part[1:] if k and part.startswith("\n") else part  # the marker's own newline
            body = part.removesuffix("\n")
            if body == "\n".join(cell.lines):
                continue
            if not cell.kept:
                raise NotebookError(f"cell {cell.index + 1}: a fix changed a cell jaxfix left out; not applied")
            changed[cell.index] = _unmask(cell, body)
        return changed


def read(text: str) -> tuple[object, NotebookModule]:
    """The notebook (nbformat's node) and its joined module. Raises `NotebookError`."""
    import nbformat

    try:
        nb = nbformat.reads(text, as_version=nbformat.NO_CONVERT)
    except Exception as exc:  # noqa: BLE001 - nbformat raises JSON, schema and version errors of many kinds
        raise NotebookError(
            f"not a readable notebook: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
        ) from None
    if nb.get("nbformat") != 4:
        raise NotebookError(f"nbformat {nb.get('nbformat')} notebooks are not supported (only version 4)")
    language = _language(nb)
    if language not in ("python", ""):
        raise NotebookError(f"not a Python notebook (language {language!r}); not checked")
    code = [(i, cell.get("source", "")) for i, cell in enumerate(nb.cells) if cell.get("cell_type") == "code"]
    return nb, module_of(code)


def module_of(code_cells: list[tuple[int, str]]) -> NotebookModule:
    """The joined module of the code cells `(index in the notebook, source)`, in order (also
    what the language server builds from an editor's notebook document)."""
    cells = [_hide_user_magics(_mask(index, source)) for index, source in code_cells]
    if not cells:
        cells.append(Cell(index=0, source="", lines=[""]))
    chunks = []
    for k, cell in enumerate(cells):
        if k:
            chunks.append(_MARK.format(cell.index + 1) + "\n")
        chunks.append("\n".join(cell.lines) + "\n")
    errors = [f"cell {c.index + 1}: {c.problem}" for c in cells if c.problem]
    return NotebookModule("".join(chunks), cells, errors)


def _language(nb) -> str:
    meta = nb.get("metadata", {})
    name = (meta.get("kernelspec") or {}).get("language") or (meta.get("language_info") or {}).get("name") or ""
    return str(name).lower()


def _mask(index: int, src: str) -> Cell:
    """The cell as the module reads it: black's masking, kept only where it gives back every byte."""
    lines = src.split("\n")
    blank = [""] * len(lines)
    head = src.lstrip()
    if not head.startswith("%%") and not _MARK_LINE.search(src):
        # A cell that parses has nothing to mask (`mask_cell` returns it as it is): most cells,
        # and importing black cost a check of a notebook-free tree with one notebook 0.3 s.
        try:
            ast.parse(src)
        except Exception:  # noqa: BLE001 - black's masking decides (and reports) from here
            pass
        else:
            return Cell(index, src, lines)
    from black.handle_ipynb_magics import PYTHON_CELL_MAGICS, mask_cell, unmask_cell
    from black.report import NothingChanged

    if head.startswith("%%"):
        magic = head[2:].split(None, 1)[0] if head[2:].strip() else ""
        if magic not in PYTHON_CELL_MAGICS:
            return Cell(index, src, blank, kept=False)  # %%bash, %%writefile, ...: not Python
    if _MARK_LINE.search(src):
        return Cell(index, src, blank, kept=False, problem="holds jaxfix's own cell marker line")
    try:
        masked, replacements = mask_cell(src)
    except NothingChanged:
        return Cell(
            index, src, blank, kept=False, problem="an IPython magic over several lines, which jaxfix cannot mask"
        )
    except SyntaxError as exc:
        return Cell(index, src, blank, kept=False, problem=f"does not parse: {exc.msg} (line {exc.lineno})")
    except Exception as exc:  # noqa: BLE001 - IPython's transformer on input it does not expect
        return Cell(index, src, blank, kept=False, problem=f"IPython input jaxfix cannot read ({type(exc).__name__})")
    if not replacements:
        return Cell(index, src, lines)
    lead = next((i for i, line in enumerate(lines) if line.strip()), len(lines))
    trail = next((i for i, line in enumerate(reversed(lines)) if line.strip()), 0)
    core = lines[lead : len(lines) - trail]
    got = masked.split("\n")
    while got and not got[-1].strip():
        got.pop()
    while got and not got[0].strip():
        got.pop(0)
    exact: dict[str, str] = {}  # a whole-line magic as black gives it back -> as written (`%%timeit `)
    try:
        back = unmask_cell("\n".join(got), replacements).split("\n") if len(got) == len(core) else []
    except NothingChanged:  # a mask not found again
        back = []
    for k, (u, o) in enumerate(zip(back, core)):
        if u != o and o.rstrip() == u and u.lstrip().startswith(("%", "!")):
            exact[u] = o
        elif u == "" and not o.strip():
            back[k] = got[k] = o  # black's masking empties a whitespace-only line: keep it as written
    if len(back) != len(core) or any(exact.get(u, u) != o for u, o in zip(back, core)):
        return Cell(index, src, blank, kept=False, problem="IPython input that jaxfix cannot mask and keep as written")
    commented = not any(_COMMENTED_TIMING.match(line) for line in lines)
    if commented:
        by_mask = {r.mask: r.src for r in replacements}
        got = [
            "# " + o if by_mask.get(m.strip()) == o and _TIMING.match(o) and (k == 0 or not o.startswith("%%")) else m
            for k, (m, o) in enumerate(zip(got, core))
        ]  # (a cell magic only as the cell's first line, where IPython reads one)
        text = "\n".join(got)
        replacements = [r for r in replacements if r.mask in text]  # the others are commented, not masked
    return Cell(index, src, [*lines[:lead], *got, *lines[len(lines) - trail :]], replacements, commented, exact=exact)


def _hide_user_magics(cell: Cell) -> Cell:
    """A cell whose timing magics jaxfix did not comment out (it parses as Python, or holds such a
    comment already) keeps the user's own `# %timeit f(x)` comments (a timing kept for the record,
    a call commented out): the module spells them `#\u200b %timeit` so that the timing rules, which
    read `# %timeit` lines as magics, do not take them for one (fabiannagel/gknet-benchmarks
    misc/JAX-MD Neighbor Lists.ipynb cell 15, heldout25: a safe fix rewrote such a comment).
    `_unmask` gives them back as written."""
    if cell.commented or not cell.kept or not any(_COMMENTED_TIMING.match(line) for line in cell.lines):
        return cell
    lines = [_HIDDEN + line[2:] if _COMMENTED_TIMING.match(line) else line for line in cell.lines]
    return replace(cell, lines=lines)


_HIDDEN = "#\u200b "  # a user's `# %timeit` comment in the module (`_hide_user_magics`)


def _shown(line: str) -> str:
    """`line` as the user wrote it: a hidden `# %timeit` comment given back."""
    return "# " + line[len(_HIDDEN) :] if line.startswith(_HIDDEN) else line


def _unmask(cell: Cell, text: str) -> str:
    from black.handle_ipynb_magics import unmask_cell

    if cell.commented:
        text = "\n".join(m.group(1) if (m := _COMMENTED_TIMING.match(line)) else line for line in text.split("\n"))
    elif _HIDDEN in text:
        text = "\n".join(map(_shown, text.split("\n")))
    from black.report import NothingChanged

    try:
        text = unmask_cell(text, cell.replacements) if cell.replacements else text
        return "\n".join(cell.exact.get(line, line) for line in text.split("\n")) if cell.exact else text
    except NothingChanged:
        raise NotebookError(f"cell {cell.index + 1}: a fix removed masked IPython input; not applied") from None


# -- writing back -----------------------------------------------------------------------------

_WS = re.compile(r"[ \t\n\r]*")


def _object_members(text: str, start: int) -> dict[str, tuple[int, int]]:
    """The (start, end) of each member value of the JSON object at `start`, read with the
    standard library's JSON decoder (strings by `scanstring`, values by `raw_decode`)."""
    decoder = json.JSONDecoder()
    spans: dict[str, tuple[int, int]] = {}
    assert text[start] == "{"
    i = _WS.match(text, start + 1).end()
    if text[i] == "}":
        return spans
    while True:
        key, i = json.decoder.scanstring(text, i + 1)
        i = _WS.match(text, i).end()
        i = _WS.match(text, i + 1).end()  # past ":"
        _, end = decoder.raw_decode(text, i)
        spans[key] = (i, end)
        i = _WS.match(text, end).end()
        if text[i] == "}":
            return spans
        i = _WS.match(text, i + 1).end()  # past ","


def _array_items(text: str, start: int) -> list[tuple[int, int]]:
    decoder = json.JSONDecoder()
    items = []
    i = _WS.match(text, start + 1).end()
    if text[i] == "]":
        return items
    while True:
        _, end = decoder.raw_decode(text, i)
        items.append((i, end))
        i = _WS.match(text, end).end()
        if text[i] == "]":
            return items
        i = _WS.match(text, i + 1).end()


def _render_source(old: str, new: str, ascii_only: bool) -> str:
    """`new` as a JSON value in the layout of the value `old` (a list of lines or one string)."""
    if old.startswith('"'):
        return json.dumps(new, ensure_ascii=ascii_only)
    lines = new.splitlines(keepends=True)
    if not lines:
        return "[]"
    first = _WS.match(old, 1).end()
    if old[first] == "]":  # was empty: one level deeper than nothing known, as nbformat writes
        item_sep, close_sep = "\n", ""
    else:
        item_sep = old[1:first]
        close_sep = old[_WS_BEFORE(old) : len(old) - 1]
    return (
        "["
        + item_sep
        + ("," + item_sep).join(json.dumps(line, ensure_ascii=ascii_only) for line in lines)
        + close_sep
        + "]"
    )


def _WS_BEFORE(value: str) -> int:
    i = len(value) - 1
    while i > 0 and value[i - 1] in " \t\n\r":
        i -= 1
    return i


def patch_sources(text: str, sources: dict[int, str]) -> str:
    """The notebook JSON `text` with the `source` of the cells `sources` names (by index)
    replaced, every other byte as it was."""
    start = _WS.match(text).end()
    top = _object_members(text, start)
    cells_at = top["cells"][0]
    items = _array_items(text, cells_at)
    ascii_only = text.isascii() and "\\u" in text
    edits = []
    for index, new in sources.items():
        members = _object_members(text, items[index][0])
        a, b = members["source"]
        edits.append((a, b, _render_source(text[a:b], new, ascii_only)))
    for a, b, value in sorted(edits, reverse=True):
        text = text[:a] + value + text[b:]
    return text


def write_back(text: str, nb, sources: dict[int, str]) -> str:
    """`patch_sources`, checked: nbformat reads the result with exactly the new sources, and it
    validates where the original did. Raises `NotebookError`."""
    import nbformat

    new_text = patch_sources(text, sources)
    try:
        again = nbformat.reads(new_text, as_version=nbformat.NO_CONVERT)
    except Exception as exc:  # noqa: BLE001 - as in `read`
        raise NotebookError(f"rewritten notebook does not read back ({type(exc).__name__}); not written") from None
    for i, cell in enumerate(again.cells):
        want = sources.get(i, nb.cells[i].get("source"))
        if cell.get("source") != want:
            raise NotebookError(f"cell {i + 1}: rewritten source does not read back; not written")
    if _valid(nb) and not _valid(again):
        raise NotebookError("rewritten notebook does not validate; not written")
    return new_text


def _valid(nb) -> bool:
    import nbformat

    try:
        nbformat.validate(nb)
    except nbformat.ValidationError:
        return False
    return True


# -- the engine's entry --------------------------------------------------------------------


def analyze_notebook(
    text: str, path: str, config, *, fix: bool = False, project=None, edits: bool = True
) -> FileResult:
    """`pipeline.analyze` on a notebook's JSON text: findings at (cell, line, column), and with
    `fix`, the rewritten JSON text as `fixed_source` (`edits`: as `analyze` takes it). With the run's `project` index, what the
    notebook imports from the project is known as a module's imports are (a model class, a
    training loop that jits what it is given)."""
    from jaxfix.engine.pipeline import analyze

    result = FileResult(path=path, source=text)
    try:
        nb, module = read(text)
    except NotebookError as exc:
        result.error = str(exc)
        return result
    inner = analyze(module.text, path, config, fix=fix, project=project, edits=edits)
    errors = [*module.errors, *([inner.error] if inner.error else [])]
    result.findings = module.place(inner.findings)
    result.hidden_preview = inner.hidden_preview
    result.remaining_in_source = module.place(inner.remaining_in_source)
    result.fixes_applied = module.place(inner.fixes_applied)
    result.rounds = inner.rounds
    fixed = inner.fixed_source
    result.remaining = module.place(inner.remaining, fixed if fixed is not None else module.text)
    if fix and fixed is not None:
        try:
            sources = module.sources_of(fixed)
            if sources:
                result.fixed_source = write_back(text, nb, sources)
        except NotebookError as exc:
            errors.append(str(exc))
            result.fixes_applied, result.remaining = [], result.findings
    if errors:
        result.error = "; ".join(errors)
    return result


def cell_diffs(path: str, old: str, new: str) -> str:
    """Unified diffs of the code cells whose source differs between two notebook texts."""
    import nbformat

    before = nbformat.reads(old, as_version=nbformat.NO_CONVERT).cells
    after = nbformat.reads(new, as_version=nbformat.NO_CONVERT).cells
    out = []
    for i, (a, b) in enumerate(zip(before, after)):
        if a.get("source") != b.get("source"):
            name = f"{path}:cell {i + 1}"
            old_name, new_name = (name, name) if path.startswith("/") else (f"a/{name}", f"b/{name}")  # as git
            out.extend(
                difflib.unified_diff(
                    _lines(a.get("source", "")), _lines(b.get("source", "")), fromfile=old_name, tofile=new_name
                )
            )
    return "".join(out)


def _lines(text: str) -> list[str]:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return lines


# -- running ------------------------------------------------------------------------------------

_TIMED = re.compile(r"^# %%?time(?:it)?(?P<rest>(?:\s.*)?)$")
_TIMEIT_OPTIONS = re.compile(r"^\s*(?:-[nrp]\s*\d+\s*|-[tcqo](?:\s+|$))*")


def runnable(module: NotebookModule) -> str:
    """The joined module as a script runs it (`fix --verify`, `explain nb.ipynb`): masked IPython
    input is inert string literals, and each timing magic jaxfix commented out (`# %timeit -n 3
    f(x)`) runs its statement once (`f(x)`), as IPython runs it (more often), so a fix inside the
    magic is run, not skipped. Lines keep their numbers."""
    lines = [_shown(line) for line in module.text.split("\n")]
    starts = module.starts()
    for k, cell in enumerate(module.cells):
        if not cell.commented:
            continue  # its `# %timeit` lines are the user's own comments (`_hide_user_magics`)
        for i in range(starts[k] - 1, starts[k] - 1 + len(cell.lines)):
            match = _TIMED.match(lines[i])
            if match:
                lines[i] = _TIMEIT_OPTIONS.sub("", match.group("rest"), count=1).strip()
    return "\n".join(lines)
