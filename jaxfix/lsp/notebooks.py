"""Notebook documents (LSP 3.17 `notebookDocument/*`, as VS Code sends them).

pygls keeps the notebook and its cells' text documents in the workspace; this module analyses
a notebook's Python cells as one module (`jaxfix.engine.notebook.module_of`, the same joined
text and map back to cells as `jaxfix check nb.ipynb`), publishes each cell's diagnostics on
that cell's URI, and answers a cell's quick fixes with edits of the cells the fix changes (a
hoist in its own cell, an import in the first import cell).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from lsprotocol import types

from jaxfix.edits import apply_edits, edits_between
from jaxfix.engine.notebook import NotebookError, NotebookModule, module_of
from jaxfix.lsp.actions import QUICKFIX, fix_edits, text_edits
from jaxfix.lsp.diagnostics import to_diagnostic, to_range
from jaxfix.lsp.positions import LineIndex
from jaxfix.model import Finding

# the server, `jaxfix.lsp.server.JaxfixLanguageServer` (which imports this module)
JaxfixLanguageServer = Any

# Python cells of Jupyter notebooks; the client then syncs them through notebookDocument/*.
SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(
            cells=[types.NotebookCellLanguage(language="python")], notebook="jupyter-notebook"
        )
    ]
)


@dataclass
class NotebookAnalysis:
    cells: list[tuple[str, str]]  # (cell URI, text) of every cell, markdown included, in order
    module: NotebookModule
    found: list[tuple[Finding, Finding]] = field(default_factory=list)  # (in the module, in its cell)


def _cells(ls: JaxfixLanguageServer, notebook_uri: str) -> list[tuple[str, str, bool]] | None:
    """(cell URI, text, is code) of the notebook's cells, or None when it is not open."""
    notebook = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    if notebook is None:
        return None
    out = []
    for cell in notebook.cells:
        doc = ls.open_document(cell.document)  # pygls keys documents by the unquoted URI
        out.append((cell.document, doc.source if doc is not None else "", cell.kind == types.NotebookCellKind.Code))
    return out


def _analyze(ls: JaxfixLanguageServer, notebook_uri: str, cells: list[tuple[str, str, bool]]) -> NotebookAnalysis:
    from jaxfix.engine import analyze

    module = module_of([(i, text) for i, (_, text, code) in enumerate(cells) if code])
    path, config = ls.path_and_config(notebook_uri)
    result = analyze(module.text, path, config)
    placed = module.place(result.findings)
    return NotebookAnalysis([(uri, text) for uri, text, _ in cells], module, list(zip(result.findings, placed)))


async def lint(ls: JaxfixLanguageServer, notebook_uri: str) -> None:
    """Analyse the notebook and publish every cell's diagnostics (none for a clean cell)."""
    cells = _cells(ls, notebook_uri)
    if cells is None:
        return
    loop = asyncio.get_running_loop()
    analysis = await loop.run_in_executor(ls._analysis_pool, _analyze, ls, notebook_uri, cells)
    if _cells(ls, notebook_uri) != cells:
        return  # changed meanwhile: a newer lint is on its way
    ls.notebooks[notebook_uri] = analysis
    encoding = ls._encoding()
    for number, (uri, text) in enumerate(analysis.cells, start=1):
        index = LineIndex(text, encoding)
        doc = ls.open_document(uri)
        version = doc.version if doc is not None else None
        diagnostics = [to_diagnostic(f, index, version) for _, f in analysis.found if f.cell == number]
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))


def schedule(ls: JaxfixLanguageServer, notebook_uri: str, delay: float) -> None:
    """Lint the notebook after `delay` (a burst of edits costs one analysis)."""
    pending = ls.notebook_pending.get(notebook_uri)
    if pending is not None and not pending.done():
        pending.cancel()

    async def run() -> None:
        if delay > 0:
            await asyncio.sleep(delay)
        await lint(ls, notebook_uri)

    ls.notebook_pending[notebook_uri] = asyncio.ensure_future(run())


def clear(ls: JaxfixLanguageServer, notebook_uri: str) -> None:
    pending = ls.notebook_pending.pop(notebook_uri, None)
    if pending is not None and not pending.done():
        pending.cancel()
    analysis = ls.notebooks.pop(notebook_uri, None)
    for uri, _ in analysis.cells if analysis is not None else ():
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def code_actions(ls: JaxfixLanguageServer, cell_uri: str, params: types.CodeActionParams) -> list[types.CodeAction]:
    """The quick fixes of the findings in the cell `cell_uri` under the requested range."""
    notebook = ls.workspace.get_notebook_document(cell_uri=cell_uri)
    analysis = ls.notebooks.get(notebook.uri) if notebook is not None else None
    if analysis is None or _cells(ls, notebook.uri) is None:
        return []
    current = {uri: text for uri, text, _ in _cells(ls, notebook.uri)}
    if any(current.get(uri) != text for uri, text in analysis.cells):
        return []  # offsets of an older text would corrupt the cells
    number = next(i for i, (uri, _) in enumerate(analysis.cells, start=1) if uri == cell_uri)
    encoding = ls._encoding()
    index = LineIndex(current[cell_uri], encoding)
    out = []
    for raw, placed in analysis.found:
        fix = raw.fix
        if placed.cell != number or fix is None or not fix.applicable or not _overlaps(to_range(placed, index), params.range):
            continue
        try:
            sources = analysis.module.sources_of(apply_edits(analysis.module.text, fix_edits(analysis.module.text, fix)))
        except NotebookError:
            continue
        changes = {}
        for cell_index, new in sources.items():
            uri, old = analysis.cells[cell_index]
            changes[uri] = text_edits(LineIndex(old, encoding), edits_between(old, new))
        out.append(
            types.CodeAction(
                title=f"{placed.code}: {fix.title}",
                kind=QUICKFIX,
                diagnostics=[to_diagnostic(placed, index, None)],
                edit=types.WorkspaceEdit(changes=changes),
                is_preferred=True,
            )
        )
    return out


def _overlaps(a: types.Range, b: types.Range) -> bool:
    start = (b.start.line, b.start.character)
    end = (b.end.line, b.end.character)
    return (a.start.line, a.start.character) <= end and start <= (a.end.line, a.end.character)
