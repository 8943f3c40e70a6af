"""The VS Code extension (editors/vscode/): its Node test against the real `jaxfix lsp`, and its .vsix.

The Node test (editors/vscode/test/lsp.test.ts) starts the server with the extension's own
server-starting code (`serverCommand`, with this interpreter as `jaxfix.interpreter`), opens a
file with a JAX201 finding, applies the quick fix, runs fix-all and `jaxfix.verifyFix`.
The sources are copied to a temporary folder and built there, so the tree is never written.
node_modules comes from editors/vscode/node_modules when it was built there, else from
`npm ci` (about a minute on 2 busy cores, from the npm registry). Skipped, with the reason,
only when node or npm is absent or the registry cannot be reached for the install.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = [pytest.mark.long, pytest.mark.slow]

EXTENSION = Path(__file__).resolve().parent.parent / "editors" / "vscode"
SOURCES = [
    "package.json",
    "package-lock.json",
    "tsconfig.json",
    "README.md",
    ".vscodeignore",
    "src",
    "test",
]


def _run(
    args: list[str], cwd: Path, timeout: float, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        args,
        check=False,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A compiled copy of the extension with its node_modules."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip(
            f"the VS Code extension's test needs node and npm on PATH (node: {node}, npm: {npm})"
        )
    work = tmp_path_factory.mktemp("vscode")
    for name in SOURCES:
        source = EXTENSION / name
        if source.is_dir():
            shutil.copytree(source, work / name)
        else:
            shutil.copy2(source, work / name)
    if (EXTENSION / "node_modules" / ".package-lock.json").is_file():
        (work / "node_modules").symlink_to(
            EXTENSION / "node_modules", target_is_directory=True
        )
    else:
        ping = _run([npm, "ping"], work, timeout=60)
        if ping.returncode != 0:
            pytest.skip(
                f"editors/vscode/node_modules is not built and the npm registry is unreachable: {ping.stderr.strip()[-300:]}"
            )
        install = _run([npm, "ci", "--no-audit", "--no-fund"], work, timeout=900)
        assert install.returncode == 0, install.stdout + install.stderr
    compiled = _run([npm, "run", "compile"], work, timeout=300)
    assert compiled.returncode == 0, compiled.stdout + compiled.stderr
    return work


def test_extension_drives_the_real_server(built: Path) -> None:
    env = {**os.environ, "JAXFIX_TEST_PYTHON": sys.executable}
    result = _run(["node", "--test", "out/test/"], built, timeout=600, env=env)
    report = result.stdout + result.stderr
    assert result.returncode == 0, report
    assert "# pass 4" in report and "# fail 0" in report, (
        report
    )  # every Node test ran, none skipped
    assert "jaxfix.verifyFix verdict: verified" in report, report


def test_extension_packages_as_vsix(built: Path) -> None:
    vsix = built / "jaxfix.vsix"
    result = _run(
        [
            str(built / "node_modules" / ".bin" / "vsce"),
            "package",
            "--skip-license",
            "--out",
            str(vsix),
        ],
        built,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    with zipfile.ZipFile(vsix) as archive:
        names = set(archive.namelist())
        manifest = json.loads(archive.read("extension/package.json"))
    main = "extension/" + manifest["main"].removeprefix("./")
    assert main in names  # the entry point VS Code loads
    assert "extension/node_modules/vscode-languageclient/lib/node/main.js" in names
    assert not any(
        name.startswith(("extension/src/", "extension/test/")) for name in names
    )
    assert {"onLanguage:python", "onNotebook:jupyter-notebook"} <= set(
        manifest["activationEvents"]
    )
    commands = {c["command"] for c in manifest["contributes"]["commands"]}
    assert {"jaxfix.fixAll", "jaxfix.verifyFix", "jaxfix.restart"} <= commands
    settings = manifest["contributes"]["configuration"]["properties"]
    assert settings["jaxfix.debounceMs"]["default"] == 200
