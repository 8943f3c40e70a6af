/**
 * The extension's server-starting code against the real `jaxfix lsp`, over stdio, in Node.
 *
 * `serverCommand` and `initializationOptions` (src/serverCommand.ts) are what the extension
 * uses; the connection is vscode-languageserver-protocol's, the library under
 * vscode-languageclient. The test opens a file with a JAX201 finding, waits for the
 * diagnostic, asks for code actions, applies the quick fix, and sees the finding go; then
 * fix-all (`source.fixAll.jaxfix`) and the `jaxfix.verifyFix` command.
 *
 * The server comes from `JAXFIX_TEST_PYTHON` (an interpreter with jaxfix installed, as the
 * `jaxfix.interpreter` setting) or else the extension's own search (`jaxfix` on PATH).
 */
import { ChildProcess, spawn } from 'child_process';
import * as assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { pathToFileURL } from 'url';
import {
  CodeAction,
  CodeActionRequest,
  createProtocolConnection,
  Diagnostic,
  DidChangeTextDocumentNotification,
  DidOpenTextDocumentNotification,
  ExecuteCommandRequest,
  ExitNotification,
  InitializedNotification,
  InitializeRequest,
  ProtocolConnection,
  PublishDiagnosticsNotification,
  PublishDiagnosticsParams,
  ShutdownRequest,
  StreamMessageReader,
  StreamMessageWriter,
  TextEdit,
  WorkspaceEdit,
} from 'vscode-languageserver-protocol/node';
import { DEFAULT_SETTINGS, expand, initializationOptions, serverCommand } from '../src/serverCommand';

const JAX201 = `import jax
import jax.numpy as jnp


def step(x):
    return jnp.sin(x) * 2.0


def run(x: jax.Array, n: int) -> jax.Array:
    for _ in range(n):
        x = jax.jit(lambda v: step(v))(x)
    return x
`;

let folder: string;
let child: ChildProcess;
let connection: ProtocolConnection;
const published = new Map<string, PublishDiagnosticsParams[]>();
const waiters: Array<() => void> = [];
const shown: string[] = [];
let stderr = '';

function uriOf(name: string): string {
  return pathToFileURL(path.join(folder, name)).toString();
}

/** Resolves with the first publication for `uri` after `since` that satisfies `accept`. */
async function diagnosticsFor(uri: string, accept: (d: Diagnostic[]) => boolean, since = 0, timeoutMs = 60_000): Promise<Diagnostic[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = (published.get(uri) ?? []).slice(since).find((p) => accept(p.diagnostics));
    if (found !== undefined) {
      return found.diagnostics;
    }
    if (Date.now() > deadline) {
      throw new Error(`no matching diagnostics for ${uri}; got ${JSON.stringify(published.get(uri))}; server stderr: ${stderr}`);
    }
    await new Promise<void>((resolve) => {
      waiters.push(resolve);
      setTimeout(resolve, 500);
    });
  }
}

function offsetAt(text: string, line: number, character: number): number {
  let offset = 0;
  for (let i = 0; i < line; i++) {
    const next = text.indexOf('\n', offset);
    offset = next < 0 ? text.length : next + 1;
  }
  return offset + character; // UTF-16 code units, the encoding this client negotiates; JS strings are UTF-16
}

function applyTextEdits(text: string, edits: TextEdit[]): string {
  const spans = edits
    .map((e) => ({ start: offsetAt(text, e.range.start.line, e.range.start.character), end: offsetAt(text, e.range.end.line, e.range.end.character), newText: e.newText }))
    .sort((a, b) => b.start - a.start || b.end - a.end);
  let out = text;
  for (const s of spans) {
    out = out.slice(0, s.start) + s.newText + out.slice(s.end);
  }
  return out;
}

/** The edits a workspace edit makes to `uri` (the server sends `documentChanges` when offered, else `changes`). */
function editsFor(edit: WorkspaceEdit | undefined, uri: string): TextEdit[] {
  const out: TextEdit[] = [];
  for (const change of edit?.documentChanges ?? []) {
    if ('textDocument' in change && change.textDocument.uri === uri) {
      out.push(...(change.edits as TextEdit[]));
    }
  }
  out.push(...(edit?.changes?.[uri] ?? []));
  return out;
}

function open(name: string, text: string): string {
  fs.writeFileSync(path.join(folder, name), text);
  const uri = uriOf(name);
  void connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri, languageId: 'python', version: 1, text },
  });
  return uri;
}

before(async () => {
  folder = fs.mkdtempSync(path.join(os.tmpdir(), 'jaxfix-vscode-'));
  const given = process.env.JAXFIX_TEST_PYTHON;
  // a relative path (as in the README's `../../.venv/bin/python`) is relative to here, not to the server's cwd
  const python = given && given.includes(path.sep) ? path.resolve(given) : given;
  const settings = { ...DEFAULT_SETTINGS, interpreter: python ? [python] : [], debounceMs: 30 };
  const command = serverCommand(settings, folder);
  assert.ok(command, 'no jaxfix server found: set JAXFIX_TEST_PYTHON or put jaxfix on PATH');
  child = spawn(command.command, command.args, { cwd: command.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stderr!.on('data', (chunk) => {
    stderr += String(chunk);
  });
  connection = createProtocolConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  connection.onNotification(PublishDiagnosticsNotification.type, (params) => {
    published.set(params.uri, [...(published.get(params.uri) ?? []), params]);
    waiters.splice(0).forEach((wake) => wake());
  });
  connection.onNotification('window/showMessage', (params: { message: string }) => {
    shown.push(params.message);
  });
  connection.onRequest('window/workDoneProgress/create', () => null);
  connection.onRequest('client/registerCapability', () => null);
  connection.listen();
  const root = pathToFileURL(folder).toString();
  const result = await connection.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    rootUri: root,
    workspaceFolders: [{ uri: root, name: 'ws' }],
    initializationOptions: initializationOptions(settings),
    capabilities: {
      general: { positionEncodings: ['utf-16'] },
      textDocument: {
        synchronization: { dynamicRegistration: false, didSave: true },
        publishDiagnostics: { relatedInformation: true, codeDescriptionSupport: true, dataSupport: true },
        codeAction: {
          codeActionLiteralSupport: { codeActionKind: { valueSet: ['quickfix', 'source', 'source.fixAll'] } },
          isPreferredSupport: true,
          dataSupport: true,
        },
      },
      workspace: { workspaceEdit: { documentChanges: true }, workspaceFolders: true, configuration: false },
      window: { workDoneProgress: true, showMessage: {} },
    },
  });
  assert.ok(result.capabilities.codeActionProvider, 'the server offers code actions');
  const commands = result.capabilities.executeCommandProvider?.commands ?? [];
  assert.ok(commands.includes('jaxfix.verifyFix'), `the server offers jaxfix.verifyFix (it offers ${JSON.stringify(commands)})`);
  await connection.sendNotification(InitializedNotification.type, {});
});

after(async () => {
  if (connection !== undefined) {
    await connection.sendRequest(ShutdownRequest.type);
    await connection.sendNotification(ExitNotification.type);
    connection.dispose();
  }
  if (child !== undefined && child.exitCode === null) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        child.kill();
        resolve();
      }, 5000);
      child.on('exit', () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
  fs.rmSync(folder, { recursive: true, force: true });
});

test('a JAX201 diagnostic arrives, its quick fix applies and the finding goes', async () => {
  const uri = open('model.py', JAX201);
  const diagnostics = await diagnosticsFor(uri, (d) => d.some((x) => x.code === 'JAX201'));
  const diagnostic = diagnostics.find((x) => x.code === 'JAX201')!;
  assert.equal(diagnostic.source, 'jaxfix');
  assert.equal(diagnostic.range.start.line, 10); // `jax.jit(lambda v: step(v))(x)`, 0-based line
  assert.equal(JAX201.split('\n')[10].slice(diagnostic.range.start.character).startsWith('jax.jit('), true);

  const actions = (await connection.sendRequest(CodeActionRequest.type, {
    textDocument: { uri },
    range: diagnostic.range,
    context: { diagnostics: [diagnostic], only: ['quickfix'] },
  })) as CodeAction[];
  const fix = actions.find((a) => a.kind === 'quickfix' && a.edit !== undefined && a.isPreferred);
  assert.ok(fix, `a preferred quick fix among ${JSON.stringify(actions.map((a) => a.title))}`);
  const fixed = applyTextEdits(JAX201, editsFor(fix.edit, uri));
  assert.match(fixed, /^_step_jit = jax\.jit\(lambda v: step\(v\)\)$/m);
  assert.match(fixed, /^ {8}x = _step_jit\(x\)$/m);
  assert.doesNotMatch(fixed, /for _ in range\(n\):\n\s+x = jax\.jit/);

  const since = published.get(uri)!.length;
  await connection.sendNotification(DidChangeTextDocumentNotification.type, {
    textDocument: { uri, version: 2 },
    contentChanges: [{ text: fixed }],
  });
  await diagnosticsFor(uri, (d) => !d.some((x) => x.code === 'JAX201'), since);

  // The verify command the server offers beside the fix, sent the way the extension sends it.
  const verify = actions.find((a) => a.command?.command === 'jaxfix.verifyFix');
  if (verify !== undefined) {
    const answer = (await connection.sendRequest(ExecuteCommandRequest.type, {
      command: 'jaxfix.verifyFix',
      arguments: [uri, null],
    })) as { verdict: string; detail: string };
    // The document has changed: the finding the action named is gone, and the server says so.
    assert.equal(answer.verdict, 'unavailable');
    assert.match(answer.detail, /no fix at that place/);
  }
});

test('fix-all (source.fixAll.jaxfix) returns the safe fixes as one edit', async () => {
  const text = JAX201 + '\n\ndef twice(x, n):\n    for _ in range(n):\n        x = jax.jit(lambda v: step(step(v)))(x)\n    return x\n';
  const uri = open('two.py', text);
  await diagnosticsFor(uri, (d) => d.filter((x) => x.code === 'JAX201').length === 2);
  const actions = (await connection.sendRequest(CodeActionRequest.type, {
    textDocument: { uri },
    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
    context: { diagnostics: [], only: ['source.fixAll.jaxfix'] },
  })) as CodeAction[];
  assert.deepEqual(actions.map((a) => a.kind), ['source.fixAll.jaxfix']);
  const fixed = applyTextEdits(text, editsFor(actions[0].edit, uri));
  assert.equal((fixed.match(/= jax\.jit\(lambda/g) ?? []).length, 2, fixed);
  assert.match(fixed, /^ {8}x = _step_jit\(x\)$/m);
  assert.match(fixed, /^ {8}x = _step_jit_2\(x\)$/m);
  assert.equal((fixed.match(/ {8}x = jax\.jit/g) ?? []).length, 0, fixed); // no jit left in a loop body
});

test('jaxfix.verifyFix runs through the server and answers a verdict', async () => {
  const uri = open('verify.py', JAX201);
  const diagnostics = await diagnosticsFor(uri, (d) => d.some((x) => x.code === 'JAX201'));
  const diagnostic = diagnostics.find((x) => x.code === 'JAX201')!;
  const actions = (await connection.sendRequest(CodeActionRequest.type, {
    textDocument: { uri },
    range: diagnostic.range,
    context: { diagnostics: [diagnostic], only: ['quickfix'] },
  })) as CodeAction[];
  const verify = actions.find((a) => a.command?.command === 'jaxfix.verifyFix');
  assert.ok(verify, `the server offers verification beside the fix: ${JSON.stringify(actions.map((a) => a.title))}`);
  const answer = (await connection.sendRequest(ExecuteCommandRequest.type, {
    command: verify.command!.command,
    arguments: verify.command!.arguments,
  })) as { verdict: string; detail: string };
  assert.equal(typeof answer.verdict, 'string');
  console.log(`jaxfix.verifyFix verdict: ${answer.verdict}: ${answer.detail}`);
  assert.equal(answer.verdict, 'verified', answer.detail); // 9 compiles -> 0 on the synthesized inputs
  assert.ok(shown.some((m) => m.startsWith('jaxfix: JAX201: ')), `the verdict is shown to the user: ${JSON.stringify(shown)}`);
});

test('settings: ${workspaceFolder} and ~ are expanded, jaxfix.path wins, debounceMs is clamped', () => {
  assert.equal(expand('${workspaceFolder}/.venv/bin/jaxfix', '/ws'), '/ws/.venv/bin/jaxfix');
  assert.equal(expand('~/bin/jaxfix', '/ws'), path.join(os.homedir(), 'bin/jaxfix'));
  assert.equal(expand('${env:JAXFIX_X}/py', '/ws', { JAXFIX_X: '/opt' }), '/opt/py');
  const bin = path.join(folder, 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(path.join(bin, 'jaxfix'), '#!/bin/sh\n', { mode: 0o755 });
  const viaPath = serverCommand({ ...DEFAULT_SETTINGS, path: ['${workspaceFolder}/missing', '${workspaceFolder}/bin/jaxfix'], interpreter: ['python3'], args: ['-v'] }, folder);
  assert.deepEqual(viaPath && [viaPath.command, ...viaPath.args], [path.join(folder, 'bin/jaxfix'), 'lsp', '-v']);
  const viaPython = serverCommand({ ...DEFAULT_SETTINGS, interpreter: ['${workspaceFolder}/.venv/bin/python'] }, folder);
  assert.deepEqual(viaPython && [viaPython.command, ...viaPython.args], [path.join(folder, '.venv/bin/python'), '-m', 'jaxfix', 'lsp']);
  assert.equal(serverCommand({ ...DEFAULT_SETTINGS, path: ['/nonexistent/jaxfix'] }, folder), undefined);
  const fallback = serverCommand(DEFAULT_SETTINGS, folder, ['/usr/bin/python3'], { PATH: '' });
  assert.deepEqual(fallback && [fallback.command, ...fallback.args], ['/usr/bin/python3', '-m', 'jaxfix', 'lsp']);
  assert.deepEqual(initializationOptions({ ...DEFAULT_SETTINGS, debounceMs: 99_999 }), { debounceMs: 10_000 });
});
