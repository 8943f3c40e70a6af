"""Shared helpers for the LSP end-to-end tests and the latency benchmark.

`RecordingClient` is pytest-lsp's test client with two additions: it keeps
*every* publishDiagnostics notification in order (pytest-lsp keeps only the
latest per document), and it answers `client/registerCapability`, recording what
the server registered, as VS Code and Emacs do.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from pathlib import Path

from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from jaxfix.engine import analyze, registry
from jaxfix.engine.config import Config
from jaxfix.model import Finding, Safety

ROOT = Path(__file__).resolve().parents[1]
SERVER_COMMAND = [sys.executable, "-m", "jaxfix.lsp"]
SERVER_ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
# The editors whose recorded capabilities the tests replay, and the encoding each negotiates.
CLIENTS = {
    "visual-studio-code": "utf-16",  # declares none -> UTF-16
    "neovim@v0.11.0": "utf-8",  # prefers utf-8
    "neovim@v0.10.0": "utf-16",
    "emacs": "utf-32",  # eglot prefers utf-32
}


class RecordingClient(LanguageClient):
    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.publishes: list[types.PublishDiagnosticsParams] = []
        self.registrations: list[types.Registration] = []


def make_recording_client() -> RecordingClient:
    client = RecordingClient(converter_factory=default_converter)

    def publish(client: RecordingClient, params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.publishes.append(params)

    def register(client: RecordingClient, params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)

    features = dict(DEFAULT_CLIENT_FEATURES)
    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = publish
    features[types.CLIENT_REGISTER_CAPABILITY] = register
    register_lsp_features(client, features)
    return client


async def next_publish(
    client: RecordingClient, uri: str, seen: int, timeout: float = 30.0
) -> types.PublishDiagnosticsParams:
    """The first publish for `uri` after the first `seen` publishes."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        for params in client.publishes[seen:]:
            if params.uri == uri:
                return params
        await asyncio.sleep(0.005)
    raise AssertionError(f"no diagnostics published for {uri} within {timeout}s")


# -- applying edits the way an editor does, independently of jaxfix.lsp.positions --------

_CODECS = {"utf-8": ("utf-8", 1), "utf-16": ("utf-16-le", 2), "utf-32": ("utf-32-le", 4)}


def offset_at(text: str, position: types.Position, encoding: str) -> int:
    parts = re.split(r"(\r\n|\r|\n)", text)
    offset = 0
    for i in range(0, 2 * position.line, 2):
        offset += len(parts[i]) + len(parts[i + 1])
    codec, width = _CODECS[str(encoding)]
    line = parts[2 * position.line] if 2 * position.line < len(parts) else ""
    return offset + len(line.encode(codec)[: position.character * width].decode(codec, "ignore"))


def apply_text_edits(text: str, edits: list[types.TextEdit], encoding: str) -> str:
    spans = [
        (offset_at(text, e.range.start, encoding), offset_at(text, e.range.end, encoding), e.new_text) for e in edits
    ]
    spans.sort(key=lambda s: (s[0], s[1]))
    out, cursor = [], 0
    for start, end, new in spans:
        assert start >= cursor, "overlapping TextEdits"
        out.append(text[cursor:start])
        out.append(new)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def edits_of(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    edit = action.edit
    assert edit is not None
    if edit.document_changes:
        (change,) = edit.document_changes
        assert change.text_document.uri == uri
        return list(change.edits)
    return list(edit.changes[uri])


# -- real rules' own examples --------------------------------------------------------------


def rule_examples() -> list[tuple[str, list[Finding]]]:
    """(source, findings) for every bad example of every rule that jaxfix has."""
    out = []
    for rule in registry.all_rules():
        for bad in [e.code for e in rule.invalid]:
            result = analyze(bad, "example.py", Config())
            if result.findings and not result.error:
                out.append((bad, result.findings))
    return out


def example_with_safe_fix() -> tuple[str, list[Finding]] | None:
    for source, findings in rule_examples():
        if any(f.fix is not None and f.fix.applicable and f.fix.safety is Safety.SAFE for f in findings):
            return source, findings
    return None


def example_with_finding(not_codes: tuple[str, ...] = ()) -> tuple[str, list[Finding]] | None:
    for source, findings in rule_examples():
        if not any(f.code in not_codes for f in findings):
            return source, findings
    return None


def examples_with_fixes(safety: tuple[Safety, ...] = (Safety.SAFE, Safety.UNSAFE)) -> list[tuple[str, list[Finding]]]:
    """Every example with at least one applicable fix of the given safety."""
    return [
        (source, findings)
        for source, findings in rule_examples()
        if any(f.fix is not None and f.fix.applicable and f.fix.safety in safety for f in findings)
    ]
