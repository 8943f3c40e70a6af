"""`jaxfix lsp` end to end: the real server over stdio, driven by pytest-lsp with the
recorded client capabilities of VS Code (UTF-16), Neovim 0.11 (UTF-8) and Emacs/eglot (UTF-32).

Tests that need a finding use the bad examples that real rules ship in their modules
(`Rule.invalid`), so they follow the rules as they land; with no rule registered they
are skipped with that reason (the machinery tests still run).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from long_support import quick_and_long
from lsp_support import (
    CLIENTS,
    SERVER_COMMAND,
    SERVER_ENV,
    RecordingClient,
    apply_text_edits,
    edits_of,
    example_with_finding,
    examples_with_fixes,
    make_recording_client,
    next_publish,
    offset_at,
)
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

from jaxfix.edits import apply_edits
from jaxfix.engine import analyze
from jaxfix.engine.config import Config
from jaxfix.engine.imports import apply_import_requests
from jaxfix.lsp import verification
from jaxfix.model import Safety

# One server per editor for the whole module (starting one costs ~1.5 s); every test works in
# a folder of its own, so documents, pyproject.toml files and diagnostics never mix. The quick
# set drives the first editor; the others are long (their encodings: test_lsp_units.py).
pytestmark = pytest.mark.asyncio(loop_scope="module")
DEBOUNCE_MS = 30
EDITORS = ["visual-studio-code", "neovim@v0.11.0", "emacs"]

CLEAN = "import jax.numpy as jnp\n\n\ndef f(x):\n    return jnp.sin(x)\n"


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=SERVER_COMMAND, server_env=SERVER_ENV, client_factory=make_recording_client
    ),
    params=quick_and_long(EDITORS),
    scope="module",
)
async def client(lsp_client: RecordingClient, request, tmp_path_factory: pytest.TempPathFactory):
    editor = request.param
    tmp_path = tmp_path_factory.mktemp("ws")
    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(editor),
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
            initialization_options={"debounceMs": DEBOUNCE_MS},
        )
    )
    lsp_client.editor = editor
    lsp_client.root = tmp_path
    lsp_client.server_caps = result.capabilities
    lsp_client.encoding = str(result.capabilities.position_encoding or "utf-16")
    yield
    await lsp_client.shutdown_session()


def fresh_folder(client: RecordingClient) -> Path:
    client.folders = getattr(client, "folders", 0) + 1
    folder = client.root / f"case{client.folders}"
    folder.mkdir()
    return folder


def open_doc(client: RecordingClient, text: str, folder: Path | None = None, name: str = "model.py") -> str:
    path = (folder or fresh_folder(client)) / name
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )
    return uri


def change_doc(client: RecordingClient, uri: str, version: int, text: str) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def code_actions(client: RecordingClient, uri: str, diagnostics, rng=None, only=None):
    rng = rng or (
        diagnostics[0].range if diagnostics else types.Range(start=types.Position(0, 0), end=types.Position(0, 0))
    )
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=rng,
            context=types.CodeActionContext(diagnostics=list(diagnostics), only=only),
        )
    )
    return result or []


def need(example):
    if example is None:
        pytest.skip("no rule with a bad example producing this kind of finding is registered yet")
    return example


# -- machinery (no rule needed) ---------------------------------------------------------


async def test_initialize_advertises_what_the_server_does(client: RecordingClient):
    caps = client.server_caps
    assert client.encoding == CLIENTS[client.editor]
    sync = caps.text_document_sync
    assert sync.open_close and sync.change == types.TextDocumentSyncKind.Incremental and sync.save
    kinds = caps.code_action_provider.code_action_kinds
    assert types.CodeActionKind.QuickFix in kinds and "source.fixAll.jaxfix" in kinds
    assert "jaxfix.verifyFix" in caps.execute_command_provider.commands
    dynamic = client.capabilities.workspace.did_change_watched_files.dynamic_registration
    if dynamic:
        for _ in range(400):
            if client.registrations:
                break
            await asyncio.sleep(0.01)
        (registration,) = client.registrations
        assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
        assert registration.register_options["watchers"][0]["globPattern"] == "**/pyproject.toml"
    else:
        await asyncio.sleep(0.2)
        assert client.registrations == []  # never ask a client for what it cannot do


async def test_clean_file_open_change_close(client: RecordingClient):
    uri = open_doc(client, CLEAN)
    first = await next_publish(client, uri, 0)
    assert not first.diagnostics and first.version == 1
    seen = len(client.publishes)
    change_doc(client, uri, 2, CLEAN + "\n\ny = f(1.0)\n")
    second = await next_publish(client, uri, seen)
    assert not second.diagnostics and second.version == 2
    seen = len(client.publishes)
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri)))
    saved = await next_publish(client, uri, seen)
    assert not saved.diagnostics and saved.version == 2
    seen = len(client.publishes)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    closed = await next_publish(client, uri, seen)
    assert not closed.diagnostics


async def test_unsaved_buffer_is_analysed_with_the_workspace_config(client: RecordingClient):
    example = example_with_finding()
    text = example[0] if example else CLEAN
    uri = f"untitled:Untitled-{id(client)}"
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)
        )
    )
    published = await next_publish(client, uri, 0)
    assert [d.code for d in published.diagnostics] == [f.code for f in (example[1] if example else [])]


async def test_half_typed_code_never_crashes_the_server(client: RecordingClient):
    example = example_with_finding()
    text = example[0] if example else CLEAN
    uri = open_doc(client, text)
    good = await next_publish(client, uri, 0)
    broken_versions = ["def f(x:\n", text + "\nif x ==\n", text.replace(")", "", 1), "\x00bad", "(" * 300 + "\n"]
    version = 1
    for broken in broken_versions:
        version += 1
        seen = len(client.publishes)
        change_doc(client, uri, version, broken)
        kept = await next_publish(client, uri, seen)
        assert kept.diagnostics == good.diagnostics  # last good diagnostics are kept
        # no quick fixes computed from an older text may be offered on a broken one
        assert await code_actions(client, uri, kept.diagnostics) == []
    version += 1
    seen = len(client.publishes)
    change_doc(client, uri, version, text)
    back = await next_publish(client, uri, seen)
    assert back.version == version
    assert [d.code for d in back.diagnostics] == [d.code for d in good.diagnostics]


async def test_changes_are_debounced_into_one_analysis(client: RecordingClient):
    uri = open_doc(client, CLEAN)
    await next_publish(client, uri, 0)
    seen = len(client.publishes)
    for version in range(2, 12):
        change_doc(client, uri, version, CLEAN + f"\n# edit {version}\n")
    last = await next_publish(client, uri, seen)
    await asyncio.sleep(4 * DEBOUNCE_MS / 1000)
    assert last.version == 11
    assert len([p for p in client.publishes[seen:] if p.uri == uri]) == 1


async def test_incremental_change_in_the_negotiated_encoding(client: RecordingClient):
    text = 'x = "é😀"  # start\n' + CLEAN
    uri = open_doc(client, text)
    await next_publish(client, uri, 0)
    # Insert after the emoji: the position is in the client's units.
    character = {"utf-16": 8, "utf-8": 11, "utf-32": 7}[client.encoding]
    seen = len(client.publishes)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=types.Position(0, character), end=types.Position(0, character)), text="!"
                )
            ],
        )
    )
    published = await next_publish(client, uri, seen)
    assert published.version == 2
    assert offset_at(text, types.Position(0, character), client.encoding) == text.index('"  #')


async def test_incremental_changes_below_a_form_feed_and_in_a_folder_with_spaces(client: RecordingClient):
    # `str.splitlines` breaks at a form feed, LSP does not: a change on the line after it must
    # land where the editor put it. The folder name makes the URI percent-encoded.
    folder = fresh_folder(client) / "my project"
    folder.mkdir()
    text = "a = 1\n\x0c\nc = 3\n"  # a page break between two statements, as GNU-style code has
    uri = open_doc(client, text, folder)
    assert "%20" in uri
    first = await next_publish(client, uri, 0)
    assert first.version == 1
    seen = len(client.publishes)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[
                types.TextDocumentContentChangePartial(
                    range=types.Range(start=types.Position(2, 0), end=types.Position(2, 1)), text="if = ("
                )
            ],
        )
    )
    # "if = ( = 3" does not parse: the server must see it on line 3 and keep the old diagnostics.
    await next_publish(client, uri, seen)
    messages = [m.message for m in client.log_messages if uri in m.message]
    assert len(messages) == 1 and "does not parse (syntax error at line 3, column 4" in messages[0], messages


async def test_verify_fix_command_reports_a_verdict_with_progress(client: RecordingClient):
    if not verification.available():
        uri = open_doc(client, CLEAN)
        await next_publish(client, uri, 0)
        tokens = len(client.progress_reports)
        answer = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="jaxfix.verifyFix", arguments=[uri, ["JAX000", 1, 1, 1, 1]])
        )
        assert answer["verdict"] == "unavailable"
        assert "not available yet" in answer["detail"] and "NOT been verified" in answer["detail"]
        assert any("not available yet" in m.message for m in client.messages)
    else:
        if client.editor != "visual-studio-code":
            pytest.skip("verification runs jax in subprocesses; one editor is enough to test the command")
        examples = [e for e in examples_with_fixes() if any(f.code != "JAX001" for f in e[1])]
        text, findings = need(examples[0] if examples else None)
        finding = next(f for f in findings if f.code != "JAX001" and f.fix is not None and f.fix.applicable)
        uri = open_doc(client, text)
        published = await next_publish(client, uri, 0)
        (diagnostic,) = [
            d for d in published.diagnostics if d.data["key"][:3] == [finding.code, finding.line, finding.column]
        ]
        actions = await code_actions(client, uri, [diagnostic])
        # pygls' client reads a command-only CodeAction back as a bare Command (a converter quirk:
        # real editors read the JSON), so find it by title and pass what it carries: uri and key.
        (verify,) = [a for a in actions if a.title == f"{finding.code}: verify this fix by differential execution"]
        tokens = len(client.progress_reports)
        answer = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="jaxfix.verifyFix", arguments=[uri, diagnostic.data["key"]])
        )
        assert answer["verdict"] in ("verified", "mismatch", "unverifiable"), answer
        assert answer["detail"]
    assert len(client.progress_reports) == tokens + 1
    reports = list(client.progress_reports.values())[-1]
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)


async def test_broken_config_is_reported_once_and_does_not_stop_analysis(client: RecordingClient):
    folder = fresh_folder(client)
    pyproject = folder / "pyproject.toml"
    pyproject.write_text("[tool.jaxfix]\nselectt = ['JAX']\n")
    messages = len(client.messages)
    seen = len(client.publishes)
    uri = open_doc(client, CLEAN, folder)
    published = await next_publish(client, uri, seen)
    assert not published.diagnostics
    seen = len(client.publishes)
    change_doc(client, uri, 2, CLEAN + "\n")
    await next_publish(client, uri, seen)
    errors = [m for m in client.messages[messages:] if m.type == types.MessageType.Error]
    assert len(errors) == 1, "reported once, not on every keystroke"
    assert "selectt" in errors[0].message and "pyproject.toml" in errors[0].message
    # Fixing the file and telling the server reloads it: no new error.
    pyproject.write_text("[tool.jaxfix]\nexclude = []\n")
    seen = len(client.publishes)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    await next_publish(client, uri, seen)
    assert len([m for m in client.messages[messages:] if m.type == types.MessageType.Error]) == 1


# -- with a real rule's finding -----------------------------------------------------------


async def test_diagnostics_carry_code_link_source_range_and_fix_data(client: RecordingClient):
    text, findings = need(example_with_finding())
    uri = open_doc(client, text)
    published = await next_publish(client, uri, 0)
    assert len(published.diagnostics) == len(findings)
    lines = text.splitlines(keepends=True)
    for diagnostic, finding in zip(published.diagnostics, findings):
        assert diagnostic.code == finding.code
        assert diagnostic.source == "jaxfix"
        assert (
            diagnostic.code_description.href
            == f"https://github.com/jaxfix/jaxfix/blob/main/docs/rules/{finding.code}.md"
        )
        assert diagnostic.message == finding.message
        start = sum(len(line) for line in lines[: finding.line - 1]) + finding.column - 1
        end = sum(len(line) for line in lines[: finding.end_line - 1]) + finding.end_column - 1
        assert offset_at(text, diagnostic.range.start, client.encoding) == start
        assert offset_at(text, diagnostic.range.end, client.encoding) == end
        fixable = finding.fix is not None and finding.fix.applicable
        assert diagnostic.data["fixable"] is fixable
        assert diagnostic.data["fix"] == (finding.fix.safety.value if finding.fix else "none")


async def test_columns_are_right_after_non_ascii_and_astral_text(client: RecordingClient):
    text, findings = need(example_with_finding())
    # Put `_s = "é😀"; ` in front of the statement on a finding's line, where that keeps the
    # finding and only shifts its columns.
    chosen = None
    for finding in findings:
        lines = text.splitlines(keepends=True)
        line = lines[finding.line - 1]
        indent = len(line) - len(line.lstrip())
        prefix = '_s = "é😀"; '
        lines[finding.line - 1] = line[:indent] + prefix + line[indent:]
        candidate = "".join(lines)
        result = analyze(candidate, "model.py", Config())
        moved = [f for f in result.findings if f.code == finding.code and f.line == finding.line]
        if not result.error and moved and moved[0].column == finding.column + len(prefix) and finding.column > indent:
            chosen = (candidate, moved[0])
            break
    if chosen is None:
        pytest.skip("no registered example has a finding on a line that can take a statement before it")
    candidate, moved = chosen
    uri = open_doc(client, candidate)
    published = await next_publish(client, uri, 0)
    (diagnostic,) = [d for d in published.diagnostics if d.code == moved.code and d.range.start.line == moved.line - 1]
    units = {"utf-16": 1 + 2, "utf-8": 2 + 4, "utf-32": 1 + 1}[client.encoding]  # é + 😀
    assert diagnostic.range.start.character == moved.column - 1 - 2 + units
    lines = candidate.splitlines(keepends=True)
    assert (
        offset_at(candidate, diagnostic.range.start, client.encoding)
        == sum(map(len, lines[: moved.line - 1])) + moved.column - 1
    )


async def test_quick_fix_edits_are_minimal_and_give_the_fixed_text(client: RecordingClient):
    # Every rule example with a fix: safe and unsafe ones, with and without imports.
    examples = examples_with_fixes()
    need(examples or None)
    for text, findings in examples:
        uri = open_doc(client, text)
        published = await next_publish(client, uri, 0)
        assert len(published.diagnostics) == len(findings)
        for diagnostic, finding in zip(published.diagnostics, findings):
            actions = await code_actions(client, uri, [diagnostic])
            fixes = [
                a
                for a in actions
                if getattr(a, "kind", None) == types.CodeActionKind.QuickFix
                and a.edit is not None
                and not a.title.endswith(f"`# noqa: {finding.code}`")
            ]
            if finding.fix is None or not finding.fix.applicable:
                assert fixes == []
                continue
            (fix,) = fixes
            assert fix.is_preferred is (finding.fix.safety is Safety.SAFE)
            assert fix.title.endswith("(unsafe)") is (finding.fix.safety is Safety.UNSAFE)
            assert fix.diagnostics[0].code == finding.code
            edits = edits_of(fix, uri)
            expected = apply_import_requests(
                apply_edits(text, finding.fix.edits), finding.fix.imports, finding.fix.unused_imports
            )
            assert apply_text_edits(text, edits, client.encoding) == expected
            if (finding.fix.imports or finding.fix.unused_imports) and expected != apply_edits(text, finding.fix.edits):
                assert len(edits) > len(finding.fix.edits), "the imports come as edits of their own"
            whole = types.Range(start=types.Position(0, 0), end=published.diagnostics[-1].range.end)
            assert all(e.range != whole for e in edits), "whole-document edit"
            assert sum(len(e.new_text) for e in edits) < len(expected) or len(text) < 80


async def test_fix_all_applies_exactly_the_safe_fixes(client: RecordingClient):
    examples = examples_with_fixes((Safety.SAFE,))
    need(examples or None)
    for text, _ in examples:
        uri = open_doc(client, text)
        published = await next_publish(client, uri, 0)
        actions = await code_actions(client, uri, [], rng=published.diagnostics[0].range, only=["source.fixAll"])
        (fix_all,) = actions
        assert fix_all.kind == "source.fixAll.jaxfix"
        expected = analyze(text, uri.removeprefix("file://"), Config(), fix=True).fixed_source
        fixed = apply_text_edits(text, edits_of(fix_all, uri), client.encoding)
        assert fixed == expected
        # Sending the fixed text back leaves no safely fixable diagnostic.
        seen = len(client.publishes)
        change_doc(client, uri, 2, fixed)
        after = await next_publish(client, uri, seen)
        assert not any(d.data["fix"] == "safe" for d in after.diagnostics)
        assert await code_actions(client, uri, [], only=["source.fixAll"]) == []


async def test_fix_all_never_applies_unsafe_fixes(client: RecordingClient):
    only_unsafe = [
        (text, findings)
        for text, findings in examples_with_fixes((Safety.UNSAFE,))
        if not any(f.fix is not None and f.fix.applicable and f.fix.safety is Safety.SAFE for f in findings)
    ]
    need(only_unsafe or None)
    for text, _ in only_unsafe:
        folder = fresh_folder(client)
        (folder / "pyproject.toml").write_text("[tool.jaxfix]\nunsafe-fixes = true\n")  # even when the CLI would
        uri = open_doc(client, text, folder)
        await next_publish(client, uri, 0)
        assert await code_actions(client, uri, [], only=["source.fixAll"]) == []


async def test_noqa_action_suppresses_the_finding(client: RecordingClient):
    # JAX001 (an unused noqa) is the one code a noqa is never offered for.
    text, findings = need(example_with_finding(not_codes=("JAX001",)))
    uri = open_doc(client, text)
    published = await next_publish(client, uri, 0)
    diagnostic = published.diagnostics[0]
    actions = await code_actions(client, uri, [diagnostic])
    (noqa,) = [a for a in actions if a.title.endswith(f"`# noqa: {diagnostic.code}`")]
    assert noqa.title == f"{diagnostic.code}: suppress with `# noqa: {diagnostic.code}`"
    edits = edits_of(noqa, uri)
    assert len(edits) == 1 and edits[0].range.start.line == diagnostic.range.start.line
    suppressed = apply_text_edits(text, edits, client.encoding)
    seen = len(client.publishes)
    change_doc(client, uri, 2, suppressed)
    after = await next_publish(client, uri, seen)
    assert not [
        d for d in after.diagnostics if d.code == diagnostic.code and d.range.start.line == diagnostic.range.start.line
    ]
    assert len(after.diagnostics) < len(published.diagnostics)


async def test_config_change_is_picked_up_without_restart(client: RecordingClient):
    text, findings = need(example_with_finding())
    code = findings[0].code
    uri = open_doc(client, text)
    before = await next_publish(client, uri, 0)
    assert code in [d.code for d in before.diagnostics]
    pyproject = Path(uri.removeprefix("file://")).parent / "pyproject.toml"
    pyproject.write_text(f"[tool.jaxfix]\nignore = ['{code}']\n")
    seen = len(client.publishes)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Created)]
        )
    )
    after = await next_publish(client, uri, seen)
    assert code not in [d.code for d in after.diagnostics]
    # Saving pyproject.toml in the editor also reloads it.
    pyproject.write_text("[tool.jaxfix]\nexclude = []\n")
    seen = len(client.publishes)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=pyproject.as_uri()))
    )
    again = await next_publish(client, uri, seen)
    assert [d.code for d in again.diagnostics] == [d.code for d in before.diagnostics]


@pytest.mark.asyncio(loop_scope="function")
async def test_jaxfix_lsp_command_serves_over_stdio(tmp_path: Path):
    """`jaxfix lsp` (the CLI command) starts the same server."""
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "jaxfix.cli", "lsp"],
        server_env=SERVER_ENV,
        client_factory=make_recording_client,
    )
    client = await config.start()
    try:
        result = await client.initialize_session(
            types.InitializeParams(capabilities=client_capabilities("visual-studio-code"), root_uri=tmp_path.as_uri())
        )
        assert result.server_info.name == "jaxfix"
        assert "jaxfix.verifyFix" in result.capabilities.execute_command_provider.commands
        await client.shutdown_session()
    finally:
        await client.stop()
