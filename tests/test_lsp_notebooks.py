"""`jaxfix lsp` and notebook documents (LSP 3.17 `notebookDocument/*`): the real server over
stdio, driven by pytest-lsp with VS Code's recorded capabilities, sending a notebook the way VS
Code does (cells as their own text documents, `vscode-notebook-cell:` URIs)."""

from __future__ import annotations

import pytest
import pytest_lsp
from lsp_support import (
    SERVER_COMMAND,
    SERVER_ENV,
    RecordingClient,
    apply_text_edits,
    make_recording_client,
    next_publish,
)
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

pytestmark = pytest.mark.asyncio(loop_scope="module")

IMPORTS = "from functools import partial\n\nimport jax\nimport jax.numpy as jnp\n"
LOOP = (
    "%matplotlib inline\n"
    "def loss(w, x):\n"
    "    return jnp.sum((w * x) ** 2)\n"
    "\n"
    "w = jnp.ones(3)\n"
    "for step in range(3):\n"
    "    g = jax.jit(jax.grad(partial(loss, x=jnp.ones(3))))(w)\n"
    "    w = w - 0.1 * g\n"
)


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER_COMMAND, server_env=SERVER_ENV, client_factory=make_recording_client),
    scope="module",
)
async def client(lsp_client: RecordingClient, tmp_path_factory: pytest.TempPathFactory):
    tmp_path = tmp_path_factory.mktemp("nbws")
    capabilities = client_capabilities("visual-studio-code")
    # the recording lacks VS Code's notebook capability (it sends this since 1.74, with LSP 3.17)
    capabilities.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(dynamic_registration=True, execution_summary_support=True)
    )
    result = await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities,
            root_uri=tmp_path.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
            initialization_options={"debounceMs": 20},
        )
    )
    lsp_client.root = tmp_path
    lsp_client.server_caps = result.capabilities
    yield
    await lsp_client.shutdown_session()


def open_notebook(client: RecordingClient, name: str, cells: list[tuple[types.NotebookCellKind, str]]) -> tuple[str, list[str]]:
    path = client.root / name
    path.write_text("{}")  # the editor's buffer is what counts
    uri = path.as_uri()
    # VS Code's shape: the fragment is the cell handle and the base64 of the notebook's scheme, whose
    # `=` padding arrives percent-encoded (seen from code-server 4.100.3 / VS Code 1.100.3:
    # `vscode-notebook-cell://HOST:PORT/ws/cells.ipynb#W0sdnNjb2RlLXJlbW90ZQ%3D%3D`); pygls keys
    # documents by the unquoted URI, so a lookup by the URI as sent finds no cell text.
    cell_uris = [f"vscode-notebook-cell:{path}#W{i}sZmlsZQ%3D%3D" for i in range(len(cells))]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=uri,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[types.NotebookCell(kind=kind, document=u) for (kind, _), u in zip(cells, cell_uris)],
            ),
            cell_text_documents=[
                types.TextDocumentItem(
                    uri=u, language_id="python" if kind == types.NotebookCellKind.Code else "markdown", version=1, text=text
                )
                for (kind, text), u in zip(cells, cell_uris)
            ],
        )
    )
    return uri, cell_uris


async def test_server_declares_notebook_sync(client: RecordingClient):
    sync = client.server_caps.notebook_document_sync
    assert sync is not None and sync.notebook_selector[0].cells[0].language == "python"


async def test_notebook_diagnostics_per_cell_and_quick_fix(client: RecordingClient):
    seen = len(client.publishes)
    cells = [
        (types.NotebookCellKind.Markup, "# Title"),
        (types.NotebookCellKind.Code, IMPORTS),
        (types.NotebookCellKind.Code, LOOP),
    ]
    nb_uri, cell_uris = open_notebook(client, "nb.ipynb", cells)
    published = await next_publish(client, cell_uris[2], seen)
    [diagnostic] = published.diagnostics
    assert diagnostic.code == "JAX201"
    assert diagnostic.range.start == types.Position(line=6, character=8)  # 0-based, in its own cell
    imports_publish = await next_publish(client, cell_uris[1], seen)
    assert not imports_publish.diagnostics

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=cell_uris[2]),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    [action] = [a for a in actions or [] if a.kind == types.CodeActionKind.QuickFix]
    changes = action.edit.changes
    assert list(changes) == [cell_uris[2]]  # the hoist lands in the loop's own cell
    fixed = apply_text_edits(LOOP, changes[cell_uris[2]], "utf-16")
    assert "_loss_grad_jit = jax.jit(jax.grad(partial(loss, x=jnp.ones(3))))\nfor step" in fixed
    assert fixed.startswith("%matplotlib inline\n")  # the magic, as it was

    # the user applies it: the cell's diagnostics are cleared
    seen = len(client.publishes)
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(uri=nb_uri, version=2),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            document=types.VersionedTextDocumentIdentifier(uri=cell_uris[2], version=2),
                            changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)],
                        )
                    ]
                )
            ),
        )
    )
    published = await next_publish(client, cell_uris[2], seen)
    assert not published.diagnostics

    client.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=nb_uri),
            cell_text_documents=[types.TextDocumentIdentifier(uri=u) for u in cell_uris],
        )
    )


async def test_timing_magic_in_a_cell(client: RecordingClient):
    seen = len(client.publishes)
    cells = [
        (types.NotebookCellKind.Code, IMPORTS + "f = jax.jit(lambda x: x @ x)\nx = jnp.ones((100, 100))\nf(x)\n"),
        (types.NotebookCellKind.Code, "%timeit f(x)"),
    ]
    _, cell_uris = open_notebook(client, "timing.ipynb", cells)
    published = await next_publish(client, cell_uris[1], seen)
    [diagnostic] = published.diagnostics
    assert diagnostic.code == "JAX504" and diagnostic.range.start == types.Position(line=0, character=8)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=cell_uris[1]),
            range=diagnostic.range,
            context=types.CodeActionContext(diagnostics=[diagnostic]),
        )
    )
    [action] = [a for a in actions or [] if a.kind == types.CodeActionKind.QuickFix]
    assert apply_text_edits("%timeit f(x)", action.edit.changes[cell_uris[1]], "utf-16") == (
        "%timeit jax.block_until_ready(f(x))"
    )
