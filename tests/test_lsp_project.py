"""The language server knows what `jaxfix check` knows across files: the real server over stdio
(VS Code's recorded capabilities) on a workspace of several modules. A helper that another
module's jitted function calls is reported in the helper's file, a pytree whose base class (or
registration helper) lives in another file is known as one, and saving the caller's file updates what the helper's file shows.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from lsp_support import SERVER_COMMAND, SERVER_ENV, RecordingClient, make_recording_client
from lsprotocol import types
from pytest_lsp import ClientServerConfig, client_capabilities

pytestmark = pytest.mark.asyncio(loop_scope="module")

MODEL = """import jax
import jax.numpy as jnp

from wf.processing import initial_processing


@jax.jit
def waveform(T, spins):
    n = initial_processing(T, 1.0 / 4096, spins)
    return spins * n
"""
MODEL_EAGER = MODEL.replace("@jax.jit\n", "")
PROCESSING = """import jax.numpy as jnp


def initial_processing(T, delta_t, spins):
    return int(jnp.ceil(T / delta_t))
"""
BASE = """import equinox as eqx


class Base(eqx.Module):
    x: float
"""
CHILD = """import functools

import jax

from wf.base import Base


class Child(Base):
    @functools.cached_property
    def doubled(self):
        return self.x * 2


def doubler(child: Child):
    return jax.jit(lambda: child.doubled)
"""

STRUCT = """import dataclasses

import jax


def dataclass(cls=None, **kwargs):
    cls = dataclasses.dataclass(frozen=True, **kwargs)(cls)
    fields = [f.name for f in dataclasses.fields(cls)]
    return jax.tree_util.register_dataclass(cls, fields, [])
"""
POLICY = """from functools import cached_property

import jax
import jax.numpy as jnp

from wf.struct import dataclass


@dataclass
class Policy:
    gains: jnp.ndarray

    @cached_property
    def norm(self):
        return jnp.linalg.norm(self.gains)


def normalizer(policy: Policy):
    return jax.jit(lambda x: x / policy.norm)
"""


def make_workspace(root: Path) -> None:
    pkg = root / "wf"
    pkg.mkdir()
    files = {"__init__.py": "", "model.py": MODEL, "processing.py": PROCESSING, "base.py": BASE, "child.py": CHILD}
    files.update({"struct.py": STRUCT, "policy.py": POLICY})
    for name, text in files.items():
        (pkg / name).write_text(text, encoding="utf-8")


@pytest_lsp.fixture(
    config=ClientServerConfig(server_command=SERVER_COMMAND, server_env=SERVER_ENV, client_factory=make_recording_client),
    scope="module",
)
async def client(lsp_client: RecordingClient, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("project")
    make_workspace(root)
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name="ws")],
            initialization_options={"debounceMs": 30},
        )
    )
    lsp_client.root = root
    yield
    await lsp_client.shutdown_session()


def open_file(client: RecordingClient, path: Path) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=path.read_text())
        )
    )
    return uri


async def codes_become(client: RecordingClient, uri: str, want: set[str], timeout: float = 30.0) -> list[types.Diagnostic]:
    """Wait until the last diagnostics published for `uri` carry exactly the codes `want`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: list[types.Diagnostic] | None = None
    while loop.time() < deadline:
        found = [p for p in client.publishes if p.uri == uri]
        if found:
            last = found[-1].diagnostics
            if {str(d.code) for d in last} == want:
                return last
        await asyncio.sleep(0.02)
    raise AssertionError(f"{uri}: wanted codes {want}, last published {[(d.code, d.message) for d in last or []]}")


async def test_helper_called_from_another_modules_jit_is_reported(client: RecordingClient):
    uri = open_file(client, client.root / "wf" / "processing.py")
    diagnostics = await codes_become(client, uri, {"JAX304"})
    assert "`waveform` (jitted, " in diagnostics[0].message and "calls `initial_processing`" in diagnostics[0].message
    assert diagnostics[0].range.start.line == 4


async def test_pytree_base_in_another_file_is_known(client: RecordingClient):
    uri = open_file(client, client.root / "wf" / "child.py")
    diagnostics = await codes_become(client, uri, {"JAX101"})
    assert diagnostics[0].range.start.line == 8


async def test_pytree_registration_helper_in_another_file_is_known(client: RecordingClient):
    """stanza's `dataclasses.dataclass` shape: the project's own decorator wraps
    `dataclasses.dataclass` and `jax.tree_util.register_dataclass` in `wf/struct.py`; the class it
    decorates in `wf/policy.py` is a pytree in the editor too."""
    uri = open_file(client, client.root / "wf" / "policy.py")
    diagnostics = await codes_become(client, uri, {"JAX101"})
    assert diagnostics[0].range.start.line == 12
    assert "wf.struct.dataclass" in diagnostics[0].message


async def test_saving_the_caller_updates_the_helper(client: RecordingClient):
    helper = open_file(client, client.root / "wf" / "processing.py")
    await codes_become(client, helper, {"JAX304"})
    model = client.root / "wf" / "model.py"
    model.write_text(MODEL_EAGER, encoding="utf-8")
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=model.as_uri())))
    await codes_become(client, helper, set())
    model.write_text(MODEL, encoding="utf-8")
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=model.as_uri())))
    await codes_become(client, helper, {"JAX304"})
