"""`check`, `fix`, `fix --write` and the LSP server never import or run the code they analyse;
`verify` does (which is how this test knows its plants work).

The planted project writes a marker file from every place Python might execute it: a
module's top level, a package `__init__.py`, a `conftest.py`, a `sitecustomize.py` and a
`.pth` file in the analysed folder. Every command runs in a real subprocess with the analysed
folder as its working directory and its `src/` on PYTHONPATH.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from lsp_support import ROOT, make_recording_client, next_publish
from lsprotocol import types

MODEL = """\
import jax

open({marker!r}, "w").close()


def step(x):
    for i in range(3):
        x = jax.jit(lambda v: v * 2.0)(x)
    return x
"""


def plant(tmp_path: Path) -> tuple[Path, Path]:
    project, markers = tmp_path / "project", tmp_path / "markers"
    markers.mkdir()
    pkg = project / "src" / "mypkg"
    pkg.mkdir(parents=True)
    touch = lambda name: f"open({str(markers / name)!r}, 'w').close()\n"  # noqa: E731
    (pkg / "__init__.py").write_text("import jax  # jit\n" + touch("package_init"))
    (pkg / "model.py").write_text(MODEL.format(marker=str(markers / "model")))
    (project / "conftest.py").write_text("import jax  # jit\n" + touch("conftest"))
    (project / "sitecustomize.py").write_text("import jax  # jit\n" + touch("sitecustomize"))
    (project / "usercustomize.py").write_text(touch("usercustomize"))
    (project / "plant.pth").write_text("import os; " + touch("pth"))
    (project / "setup.py").write_text("import jax  # jit\n" + touch("setup_py"))
    return project, markers


def env_for(project: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(project / "src")])}


def jaxfix(project: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jaxfix", *args], cwd=project, env=env_for(project), capture_output=True, text=True, timeout=300
    )


def test_check_and_fix_never_run_the_analysed_code(tmp_path):
    project, markers = plant(tmp_path)
    check = jaxfix(project, "check", "--no-cache", ".")
    assert check.returncode == 1 and "JAX201" in check.stdout, check.stderr
    diff = jaxfix(project, "fix", "--no-cache", ".")
    assert "_step_lambda_jit" in diff.stdout or "+" in diff.stdout, diff.stdout
    write = jaxfix(project, "fix", "--write", "--no-cache", "--allow-dirty", ".")
    assert write.returncode in (0, 1), write.stderr
    assert "jax.jit(lambda v: v * 2.0)(x)" not in (project / "src" / "mypkg" / "model.py").read_text()
    assert sorted(p.name for p in markers.iterdir()) == []


@pytest.mark.asyncio
async def test_lsp_server_never_runs_the_analysed_code(tmp_path):
    project, markers = plant(tmp_path)
    client = make_recording_client()
    await client.start_io(sys.executable, "-m", "jaxfix.lsp", env=env_for(project), cwd=str(project))
    try:
        await client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=project.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=project.as_uri(), name="project")],
                initialization_options={"debounceMs": 10},
            )
        )
        for path in sorted(project.rglob("*.py")):
            uri = path.as_uri()
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=path.read_text())
                )
            )
        model_uri = (project / "src" / "mypkg" / "model.py").as_uri()
        published = await next_publish(client, model_uri, 0)
        assert published.diagnostics, "the planted finding must be reported"
        everything = types.Range(start=types.Position(0, 0), end=types.Position(20, 0))
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=model_uri),
                range=everything,
                context=types.CodeActionContext(diagnostics=list(published.diagnostics)),
            )
        )
        fix_all = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(uri=model_uri),
                range=everything,
                context=types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.SourceFixAll]),
            )
        )
        assert actions and fix_all
    finally:
        await client.shutdown_session()
    assert sorted(p.name for p in markers.iterdir()) == []


def test_verify_does_run_it_so_the_plants_are_live(tmp_path):
    project, markers = plant(tmp_path)
    proc = jaxfix(project, "verify", "src/mypkg/model.py")
    assert "Traceback" not in proc.stderr
    assert "model" in {p.name for p in markers.iterdir()}, proc.stdout + proc.stderr
