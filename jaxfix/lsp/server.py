"""The jaxfix language server: wiring of LSP messages to the engine.

Diagnostics are computed from the editor's in-memory text on open, on change
(debounced: a burst of keystrokes costs one analysis) and on save, and cleared
on close. Each open document keeps a `jaxfix.engine.incremental.IncrementalAnalyzer`,
which gives what `engine.analyze` gives while re-analysing only the statements an
edit can have changed; fix-all runs `engine.analyze(fix=True)`. A text that does
not parse keeps the last good diagnostics (or none); nothing a user types can
crash the server. Analyses run in one worker thread so the event loop keeps
answering requests, and a result that is older than the document is thrown away.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from lsprotocol import types
from pygls import uris
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from jaxfix import __version__
from jaxfix.engine import analyze
from jaxfix.engine.incremental import IncrementalAnalyzer
from jaxfix.lsp import actions, notebooks, verification
from jaxfix.lsp.diagnostics import match_findings, to_diagnostic, to_range
from jaxfix.lsp.positions import LineIndex
from jaxfix.lsp.project import WorkspaceIndex
from jaxfix.lsp.settings import Settings, is_config_file
from jaxfix.model import FileResult, Finding, Safety

logger = logging.getLogger(__name__)

DEFAULT_DEBOUNCE_S = 0.2
VERIFY_COMMAND = "jaxfix.verifyFix"


@dataclass
class Analysis:
    """One analysis of one exact text of a document."""

    text: str
    version: int | None
    generation: tuple  # settings and project-index generation it was computed under (`_generation`)
    result: FileResult
    parses: bool
    seconds: float = 0.0
    parse_error: str | None = None


@dataclass
class DocumentState:
    last_good: Analysis | None = None  # the newest analysis of a text that parsed
    latest: Analysis | None = None  # the newest analysis, parsed or not
    pending: asyncio.Task | None = None
    inflight: tuple[str, tuple, asyncio.Future] | None = None  # (text, generation, analysis)
    fix_all: tuple[tuple[str, tuple], str | None] | None = None  # ((text, generation), fixed text)
    diagnostics: list[types.Diagnostic] = field(default_factory=list)
    analyzer: IncrementalAnalyzer = field(default_factory=IncrementalAnalyzer)  # used by the analysis thread only


def _document_path(uri: str) -> str | None:
    if uris.uri_scheme(uri) != "file":
        return None
    return uris.to_fs_path(uri)


def _analysis_path(uri: str) -> str:
    return _document_path(uri) or uri


def _kind_wanted(kind: str, only: list[str] | None) -> bool:
    if not only:
        return True
    return any(kind == o or kind.startswith(o + ".") for o in only)


class JaxfixLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "jaxfix", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            notebook_document_sync=notebooks.SYNC,
        )
        self.documents: dict[str, DocumentState] = {}
        self.notebooks: dict[str, notebooks.NotebookAnalysis] = {}  # by notebook URI (`notebooks`)
        self.notebook_pending: dict[str, asyncio.Future] = {}
        self.debounce_s = DEFAULT_DEBOUNCE_S
        self.settings = Settings(report=self._show_error)
        self._analysis_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jaxfix-analyze")
        self._loop: asyncio.AbstractEventLoop | None = None
        self.project = WorkspaceIndex()  # cross-file facts, built after `initialized`

    def on_loop(self, send) -> None:
        """Run `send()` on the event loop: messages must never be written from a worker thread."""
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is not None or self._loop is None:
            send()
        else:
            self._loop.call_soon_threadsafe(send)

    # -- messages to the user ----------------------------------------------
    def _show_error(self, message: str) -> None:
        # Called from the analysis thread when a pyproject.toml is broken.
        self.on_loop(
            lambda: self.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))
        )

    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        self.window_log_message(types.LogMessageParams(type=kind, message=message))

    def open_document(self, uri: str) -> TextDocument | None:
        """The open document `uri` names, or None (pygls keys documents by the unquoted URI)."""
        return self.workspace.text_documents.get(unquote(uri))

    # -- capabilities of this client -------------------------------------------
    def _document_changes(self) -> bool:
        caps = self.client_capabilities
        ws = caps.workspace
        return bool(ws and ws.workspace_edit and ws.workspace_edit.document_changes)

    def _encoding(self) -> str:
        return self.workspace.position_encoding or types.PositionEncodingKind.Utf16

    # -- analysis ------------------------------------------------------------
    def path_and_config(self, uri: str):
        """The path an analysis of the document `uri` reports, and the config it runs under."""
        return _analysis_path(uri), self.settings.config_for(_document_path(uri))

    def _analyze_now(self, text: str, version: int | None, uri: str, generation: tuple) -> Analysis:
        path = _analysis_path(uri)
        config = self.settings.config_for(_document_path(uri))
        started = time.perf_counter()
        state = self.documents.get(uri)
        analyzer = state.analyzer if state is not None else IncrementalAnalyzer()
        result = analyzer.analyze(text, path, config, project=self.project.index)
        # Half-typed code keeps its last good diagnostics instead of making them flicker, or
        # worse, reporting every noqa unused.
        problem = analyzer.parse_error
        return Analysis(text, version, generation, result, problem is None, time.perf_counter() - started, problem)

    def _analyze_if_current(self, text: str, version: int | None, uri: str, generation: tuple) -> Analysis | None:
        """Worker-thread body: skip texts the user has already typed past (queued analyses pile up)."""
        doc = self.open_document(uri)
        if doc is None or doc.source != text:
            return None
        return self._analyze_now(text, version, uri, generation)

    def _generation(self) -> tuple:
        """What an analysis depends on besides the text: the config and the project index."""
        index = self.project.index
        return (self.settings.generation, id(index), getattr(index, "generation", 0))

    async def analysis(self, uri: str) -> Analysis | None:
        """An analysis of the document's current text (computed now if the stored one is stale).

        None when the document is closed, or changed while its analysis waited in the queue.
        """
        doc = self.open_document(uri)
        if doc is None:
            return None
        text, version = doc.source, doc.version
        state = self.documents.setdefault(uri, DocumentState())
        generation = self._generation()
        cached = state.latest
        if cached is not None and cached.text == text and cached.generation == generation:
            return cached
        inflight = state.inflight
        if inflight is not None and inflight[0] == text and inflight[1] == generation:
            future = inflight[2]  # a lint and a code-action request share one analysis
        else:
            loop = asyncio.get_running_loop()
            future = loop.run_in_executor(self._analysis_pool, self._analyze_if_current, text, version, uri, generation)
            state.inflight = (text, generation, future)
        result = await asyncio.shield(future)  # a cancelled lint must not cancel the others' wait
        if result is None:
            return None
        state = self.documents.get(uri)
        if state is None:
            return result  # closed meanwhile; the caller's document is gone
        if state.inflight is not None and state.inflight[2] is future:
            state.inflight = None
        current = self.open_document(uri)
        if current is not None and current.source == text:
            state.latest = result
            if result.parses:
                state.last_good = result
        return result

    async def lint(self, uri: str) -> None:
        """Analyse the document and publish its diagnostics (if it is still open and unchanged)."""
        try:
            analysis = await self.analysis(uri)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # never let one document take the server down
            logger.exception("analysis failed")
            self.log(
                f"jaxfix: internal error while analysing {uri}: {type(exc).__name__}: {exc}", types.MessageType.Error
            )
            return
        state = self.documents.get(uri)
        doc = self.open_document(uri)
        if analysis is None or state is None or doc is None or doc.source != analysis.text:
            return  # closed or changed meanwhile; a newer lint is on its way
        if not analysis.parses:
            self.log(f"jaxfix: {uri} does not parse ({analysis.parse_error}); keeping the last diagnostics")
            diagnostics = state.diagnostics
        else:
            if analysis.result.error:
                self.log(f"jaxfix: {uri}: {analysis.result.error}", types.MessageType.Warning)
            index = LineIndex(analysis.text, self._encoding())
            diagnostics = [to_diagnostic(f, index, analysis.version) for f in analysis.result.findings]
        state.diagnostics = diagnostics
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=doc.version)
        )

    def schedule(self, uri: str, delay: float) -> None:
        state = self.documents.setdefault(uri, DocumentState())
        if state.pending is not None and not state.pending.done():
            state.pending.cancel()

        async def run() -> None:
            if delay > 0:
                await asyncio.sleep(delay)
            await self.lint(uri)

        state.pending = asyncio.ensure_future(run())

    def relint_all(self) -> None:
        for uri in list(self.documents):
            if self.open_document(uri) is not None:
                self.schedule(uri, 0)

    def build_project_index(self) -> None:
        """Index the workspace in the background; analyse the open documents again when done."""
        if self.settings.roots:
            self.project.build(self.settings.roots, lambda: self.on_loop(self._project_ready))

    def _project_ready(self) -> None:
        self.log(f"jaxfix: project index ready ({self.project.build_seconds or 0:.2f} s)")
        self.relint_all()

    def refresh_project(self, path: str | None) -> None:
        """A saved file: its entry in the index is read again (in the analysis thread, which is
        the only reader of the index), then the open documents are analysed again."""
        if path is None or self.project.index is None:
            return

        def done(future) -> None:
            self.on_loop(self.relint_all)

        self._analysis_pool.submit(self.project.refresh, path).add_done_callback(done)

    def reload_config(self) -> None:
        self.settings.reload()
        self.log("jaxfix: configuration reloaded", types.MessageType.Info)
        self.relint_all()

    # -- code actions ----------------------------------------------------------
    async def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        uri = params.text_document.uri
        analysis = await self.analysis(uri)
        if analysis is None or not analysis.parses:
            return []  # offsets of an older text would corrupt the document
        doc = self.open_document(uri)
        if doc is None or doc.source != analysis.text:
            return []
        only = params.context.only
        index = LineIndex(analysis.text, self._encoding())
        doc_changes = self._document_changes()
        findings = analysis.result.findings
        out: list[types.CodeAction] = []
        if _kind_wanted(actions.QUICKFIX, only):
            pairs = match_findings(list(params.context.diagnostics), findings, index)
            if not params.context.diagnostics:
                # Some clients ask without diagnostics: use the findings under the cursor.
                pairs = [
                    (to_diagnostic(f, index, analysis.version), f)
                    for f in findings
                    if _overlaps(to_range(f, index), params.range)
                ]
            fixes, suppressions = [], []
            for diagnostic, finding in pairs:
                action = actions.quick_fix_action(
                    uri, doc.version, analysis.text, index, diagnostic, finding, doc_changes
                )
                if action is not None:
                    fixes.append(action)
                    if verification.available():
                        fixes.append(self._verify_action(uri, diagnostic, finding))
                action = actions.noqa_action(uri, doc.version, analysis.text, index, diagnostic, finding, doc_changes)
                if action is not None:
                    suppressions.append(action)
            out.extend(fixes)
            out.extend(suppressions)
        wants_fix_all = (
            only is not None
            and any(_kind_wanted(actions.FIX_ALL_KIND, [o]) for o in only)
            or (
                only is None
                and any(f.fix is not None and f.fix.applicable and f.fix.safety is Safety.SAFE for f in findings)
            )
        )
        if wants_fix_all:
            fixed = await self.fix_all_text(uri, analysis)
            action = actions.fix_all_action(uri, doc.version, analysis.text, fixed, index, doc_changes)
            if action is not None:
                out.append(action)
        return out

    async def fix_all_text(self, uri: str, analysis: Analysis) -> str | None:
        """The document's text with every safe fix applied (never unsafe ones), cached per text."""
        if not any(
            f.fix is not None and f.fix.applicable and f.fix.safety is Safety.SAFE for f in analysis.result.findings
        ):
            return None
        state = self.documents.get(uri)
        key = (analysis.text, analysis.generation)
        if state is not None and state.fix_all is not None and state.fix_all[0] == key:
            return state.fix_all[1]
        config = replace(self.settings.config_for(_document_path(uri)), unsafe_fixes=False)
        loop = asyncio.get_running_loop()
        result = await loop.run_in_executor(
            self._analysis_pool,
            lambda: analyze(analysis.text, _analysis_path(uri), config, fix=True, project=self.project.index),
        )
        if result.error:
            self.log(f"jaxfix: fix-all: {result.error}", types.MessageType.Warning)
        state = self.documents.get(uri)
        if state is not None:
            state.fix_all = (key, result.fixed_source)
        return result.fixed_source

    def _verify_action(self, uri: str, diagnostic: types.Diagnostic, finding) -> types.CodeAction:
        return types.CodeAction(
            title=f"{finding.code}: verify this fix by differential execution",
            kind=actions.QUICKFIX,
            diagnostics=[diagnostic],
            command=types.Command(
                title="Verify fix",
                command=VERIFY_COMMAND,
                arguments=[uri, diagnostic.data.get("key") if isinstance(diagnostic.data, dict) else None],
            ),
        )

    # -- verification ------------------------------------------------------------
    async def verify_fix(self, uri: str | None, key: Any) -> dict[str, Any]:
        token = f"jaxfix-verify-{uuid.uuid4().hex[:8]}"
        progress = await self._begin_progress(token, "jaxfix: verifying fix")
        try:
            if not verification.available():
                answer = {"verdict": "unavailable", "detail": verification.UNAVAILABLE}
                self.window_show_message(
                    types.ShowMessageParams(type=types.MessageType.Info, message=verification.UNAVAILABLE)
                )
                return answer
            analysis = await self.analysis(uri) if isinstance(uri, str) else None
            if analysis is None or not analysis.parses:
                return {"verdict": "unavailable", "detail": "the document is not open or does not parse"}
            finding = next(
                (f for f in analysis.result.findings if [f.code, f.line, f.column, f.end_line, f.end_column] == key),
                None,
            )
            if finding is None or finding.fix is None or not finding.fix.applicable:
                return {"verdict": "unavailable", "detail": "no fix at that place in the current text"}

            def report(message: str) -> None:  # called from the verification thread
                if progress:
                    self.on_loop(
                        lambda: self.work_done_progress.report(token, types.WorkDoneProgressReport(message=message))
                    )

            fixed = verification.fixed_text(analysis.text, actions.fix_edits(analysis.text, finding.fix))
            loop = asyncio.get_running_loop()
            answer = await loop.run_in_executor(
                None, verification.verify_one, analysis.text, _analysis_path(uri), finding, fixed, report
            )
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Info,
                    message=f"jaxfix: {finding.code}: {answer['verdict']}: {answer['detail']}",
                )
            )
            return answer
        finally:
            if progress:
                self.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))

    async def _begin_progress(self, token: str, title: str) -> bool:
        window = self.client_capabilities.window
        if not (window and window.work_done_progress):
            return False
        try:
            await self.work_done_progress.create_async(token)
        except Exception:  # the client refused; go on without progress
            return False
        self.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title, cancellable=False))
        return True


_LSP_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


class LspTextDocument(TextDocument):
    """pygls' document, with lines split where LSP splits them.

    pygls applies incremental changes to `str.splitlines` lines, which also break at form
    feeds, U+2028 and friends; an editor (and libcst, and our positions) does not, so a
    change below a `^L` would land on the wrong line.
    """

    @property
    def lines(self):
        return tuple(_LSP_LINE.findall(self.source))


def _use_lsp_lines(workspace) -> None:
    def create(doc_uri, source=None, version=None, language_id=None):
        return LspTextDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=workspace._sync_kind,
            position_codec=workspace._position_codec,
        )

    workspace._create_text_document = create


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position) -> tuple[int, int]:
        return (p.line, p.character)

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


_WARM_UP = """import jax


@jax.jit
def step(x):
    if x > 0:
        x = x + 1
    return x


def run(x, n):
    for i in range(n):
        x = jax.jit(lambda v: v * 2)(x)
    return x
"""


def _load_rules() -> None:
    """What the first analysis would otherwise do the first time: import the rules (with libcst)
    and black (every fix's code is formatted with it), and fill their caches, by analysing a
    small module with a few findings."""
    from jaxfix.analysis.codegen import black_format
    from jaxfix.engine.config import Config

    black_format("x = 1\n", 88)
    IncrementalAnalyzer().analyze(_WARM_UP, "<warm-up>", Config())


def _warm_protocol(server: JaxfixLanguageServer) -> None:
    """Have pygls' converter build its (de)serialisers for the messages of an editing session now:
    it writes them on first use, which cost the first `didOpen` about 5 ms (its diagnostics) and
    the first `didChange` about 7 ms. Run on the event loop's thread, the only one that converts
    messages."""
    protocol = server.protocol
    converter = getattr(protocol, "_converter", None)
    if converter is None:
        return
    position = {"line": 0, "character": 0}
    document = {"uri": "file:///warm-up.py", "version": 1}
    for method, params in (
        (types.TEXT_DOCUMENT_DID_OPEN, {"textDocument": {**document, "languageId": "python", "text": ""}}),
        (
            types.TEXT_DOCUMENT_DID_CHANGE,
            {"textDocument": document, "contentChanges": [{"range": {"start": position, "end": position}, "text": ""}]},
        ),
    ):
        protocol.structure_message({"jsonrpc": "2.0", "method": method, "params": params})
    finding = Finding(code="JAX000", name="warm-up", path="", line=1, column=1, end_line=1, end_column=1, message="")
    diagnostic = to_diagnostic(finding, LineIndex(""), 1)
    converter.unstructure(
        types.PublishDiagnosticsNotification(
            params=types.PublishDiagnosticsParams(uri=document["uri"], diagnostics=[diagnostic], version=1)
        )
    )


def create_server() -> JaxfixLanguageServer:
    server = JaxfixLanguageServer()

    @server.feature(types.INITIALIZE)
    def on_initialize(ls: JaxfixLanguageServer, params: types.InitializeParams) -> None:
        options = params.initialization_options if isinstance(params.initialization_options, dict) else {}
        debounce = options.get("debounceMs")
        if isinstance(debounce, (int, float)) and not isinstance(debounce, bool) and 0 <= debounce <= 10_000:
            ls.debounce_s = debounce / 1000
        roots = [Path(p) for f in params.workspace_folders or [] if (p := _document_path(f.uri))]
        if not roots and params.root_uri and (p := _document_path(params.root_uri)):
            roots = [Path(p)]
        ls.settings.set_roots(roots)
        ls._loop = asyncio.get_running_loop()
        # The rules (with libcst, and black) are imported now, in the analysis thread, not by the
        # first document's analysis: what a user opens first is answered in the time of its analysis.
        ls._analysis_pool.submit(_load_rules)
        try:
            _warm_protocol(ls)
        except Exception:  # noqa: BLE001 - a pygls whose internals differ: its first messages are a little slower
            logger.warning("could not prepare pygls' message converters")
        try:
            _use_lsp_lines(ls.workspace)
        except AttributeError:  # a pygls without these internals: keep its own documents
            logger.warning("cannot install LSP line splitting into this pygls version")

    @server.feature(types.INITIALIZED)
    async def on_initialized(ls: JaxfixLanguageServer, params: types.InitializedParams) -> None:
        ls.build_project_index()
        ws = ls.client_capabilities.workspace
        watched = ws.did_change_watched_files if ws else None
        if watched and watched.dynamic_registration:
            registration = types.Registration(
                id="jaxfix-pyproject-watcher",
                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                register_options=types.DidChangeWatchedFilesRegistrationOptions(
                    watchers=[types.FileSystemWatcher(glob_pattern="**/pyproject.toml")]
                ),
            )
            try:
                await ls.client_register_capability_async(types.RegistrationParams(registrations=[registration]))
            except Exception as exc:
                ls.log(f"jaxfix: could not watch pyproject.toml files ({exc}); save them in the editor to reload")

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: JaxfixLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
        uri = params.text_document.uri
        if is_config_file(_document_path(uri)):
            return
        ls.documents[uri] = DocumentState()
        ls.schedule(uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: JaxfixLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in ls.documents:
            ls.schedule(uri, ls.debounce_s)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: JaxfixLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        if is_config_file(_document_path(uri)):
            ls.reload_config()
        elif ls.project.index is not None:
            ls.refresh_project(_document_path(uri))  # analyses every open document again
        elif uri in ls.documents:
            ls.schedule(uri, 0)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: JaxfixLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        state = ls.documents.pop(uri, None)
        if state is None:
            return
        if state.pending is not None and not state.pending.done():
            state.pending.cancel()
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # Notebooks: pygls keeps the notebook and its cells; their diagnostics come from `notebooks`.
    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_did_open(ls: JaxfixLanguageServer, params: types.DidOpenNotebookDocumentParams) -> None:
        notebooks.schedule(ls, params.notebook_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_did_change(ls: JaxfixLanguageServer, params: types.DidChangeNotebookDocumentParams) -> None:
        notebooks.schedule(ls, params.notebook_document.uri, ls.debounce_s)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_did_save(ls: JaxfixLanguageServer, params: types.DidSaveNotebookDocumentParams) -> None:
        notebooks.schedule(ls, params.notebook_document.uri, 0)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_did_close(ls: JaxfixLanguageServer, params: types.DidCloseNotebookDocumentParams) -> None:
        notebooks.clear(ls, params.notebook_document.uri)

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def did_change_watched(ls: JaxfixLanguageServer, params: types.DidChangeWatchedFilesParams) -> None:
        if any(is_config_file(_document_path(change.uri)) for change in params.changes):
            ls.reload_config()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: JaxfixLanguageServer, params: types.DidChangeConfigurationParams) -> None:
        ls.reload_config()

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, actions.FIX_ALL_KIND],
            resolve_provider=False,
        ),
    )
    async def code_action(ls: JaxfixLanguageServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        try:
            if ls.workspace.get_notebook_document(cell_uri=params.text_document.uri) is not None:
                return notebooks.code_actions(ls, params.text_document.uri, params)
            return await ls.code_actions(params)
        except Exception as exc:
            logger.exception("code actions failed")
            ls.log(f"jaxfix: internal error in code actions: {type(exc).__name__}: {exc}", types.MessageType.Error)
            return []

    @server.command(VERIFY_COMMAND)
    async def verify_fix(ls: JaxfixLanguageServer, *args: Any) -> dict[str, Any]:
        uri = args[0] if args else None
        key = args[1] if len(args) > 1 else None
        return await ls.verify_fix(uri, key)

    return server
