/**
 * The jaxfix extension: one `jaxfix lsp` per workspace folder (multi-root windows get one
 * each, started when the folder's first Python file or notebook cell opens), plus one for
 * untitled buffers and files outside every folder.
 *
 * The server does the work (diagnostics, quick fixes, `# noqa`, `source.fixAll.jaxfix`,
 * `jaxfix.verifyFix`); this file only starts it with the folder's settings and routes
 * the commands to the server that owns the document.
 */
import * as vscode from 'vscode';
import {
  DocumentFilter,
  DynamicFeature,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  Middleware,
  RevealOutputChannelOn,
  ServerOptions,
  StaticFeature,
} from 'vscode-languageclient/node';
import { initializationOptions, JaxfixSettings, serverCommand } from './serverCommand';

const FIX_ALL_KIND = 'source.fixAll.jaxfix';
const VERIFY_COMMAND = 'jaxfix.verifyFix';

/**
 * A client that leaves the server's commands to the extension: the stock client registers
 * every `executeCommandProvider` command as a VS Code command, and the second folder's
 * server would then fail to start ("command 'jaxfix.verifyFix' already exists").
 */
class JaxfixClient extends LanguageClient {
  public registerFeature(feature: StaticFeature | DynamicFeature<unknown>): void {
    if ((feature as DynamicFeature<unknown>).registrationType?.method === ExecuteCommandRequest.method) {
      return;
    }
    super.registerFeature(feature);
  }
}

const DEFAULT_KEY = '<no folder>';
const clients = new Map<string, JaxfixClient>();
const reportedMissing = new Set<string>();
let output: vscode.OutputChannel;

function settingsFor(scope: vscode.Uri | undefined): JaxfixSettings & { enable: boolean } {
  const config = vscode.workspace.getConfiguration('jaxfix', scope);
  return {
    enable: config.get<boolean>('enable', true),
    path: config.get<string[]>('path', []),
    interpreter: config.get<string[]>('interpreter', []),
    args: config.get<string[]>('args', []),
    debounceMs: config.get<number>('debounceMs', 200),
  };
}

/** The Python extension's interpreter for the folder (its documented `settings` API), if it is installed. */
async function pythonExtensionInterpreter(scope: vscode.Uri | undefined): Promise<string[] | undefined> {
  const python = vscode.extensions.getExtension('ms-python.python');
  if (python === undefined) {
    return undefined;
  }
  try {
    const api = python.isActive ? python.exports : await python.activate();
    const details = api?.settings?.getExecutionDetails?.(scope);
    const command: unknown = details?.execCommand;
    return Array.isArray(command) && command.length > 0 ? command.map(String) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The notebook a cell document belongs to. Its URI is asked of VS Code, not made from the cell's:
 * in a remote window (code-server, Remote-SSH, WSL) a cell URI keeps the remote authority
 * (`vscode-notebook-cell://host:port/...`) while the notebook is a plain `file:` URI.
 */
function notebookOf(cell: vscode.TextDocument): vscode.NotebookDocument | undefined {
  return vscode.workspace.notebookDocuments.find((notebook) => notebook.getCells().some((c) => c.document === cell));
}

/** The outermost workspace folder holding the document (notebook cells count as their notebook file). */
function folderOf(document: vscode.TextDocument): vscode.WorkspaceFolder | undefined {
  return folderOfUri(
    document.uri.scheme === 'vscode-notebook-cell'
      ? notebookOf(document)?.uri ?? document.uri.with({ scheme: 'file', authority: '', fragment: '' })
      : document.uri,
  );
}

function folderOfUri(uri: vscode.Uri): vscode.WorkspaceFolder | undefined {
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  if (folder === undefined) {
    return undefined;
  }
  const sorted = [...(vscode.workspace.workspaceFolders ?? [])]
    .map((f) => f.uri.toString())
    .sort((a, b) => a.length - b.length);
  const outer = sorted.find((f) => folder.uri.toString() === f || folder.uri.toString().startsWith(f.endsWith('/') ? f : f + '/'));
  return outer === undefined ? folder : vscode.workspace.getWorkspaceFolder(vscode.Uri.parse(outer)) ?? folder;
}

function isPython(document: vscode.TextDocument): boolean {
  return document.languageId === 'python' && ['file', 'untitled', 'vscode-notebook-cell'].includes(document.uri.scheme);
}

function selectorFor(folder: vscode.WorkspaceFolder | undefined): DocumentFilter[] {
  if (folder === undefined) {
    return [
      { scheme: 'untitled', language: 'python' },
      { scheme: 'file', language: 'python' },
      { scheme: 'vscode-notebook-cell', language: 'python' },
    ];
  }
  const pattern = `${folder.uri.fsPath.replace(/[\\{}[\]*?]/g, (c) => (c === '\\' ? '/' : `[${c}]`))}/**/*`;
  return [
    { scheme: 'file', language: 'python', pattern },
    { scheme: 'vscode-notebook-cell', language: 'python', pattern },
  ];
}

/** For the client without a folder: hand it only the documents no folder's client owns. */
function outsideFoldersOnly(): Middleware {
  const mine = (document: vscode.TextDocument) => folderOf(document) === undefined;
  return {
    didOpen: (document, next) => (mine(document) ? next(document) : Promise.resolve()),
    didChange: (event, next) => (mine(event.document) ? next(event) : Promise.resolve()),
    didSave: (document, next) => (mine(document) ? next(document) : Promise.resolve()),
    didClose: (document, next) => (mine(document) ? next(document) : Promise.resolve()),
    provideCodeActions: (document, range, context, token, next) => (mine(document) ? next(document, range, context, token) : []),
  };
}

async function ensureClient(document: vscode.TextDocument): Promise<void> {
  if (!isPython(document)) {
    return;
  }
  const folder = folderOf(document);
  const key = folder?.uri.toString() ?? DEFAULT_KEY;
  if (clients.has(key)) {
    return;
  }
  const settings = settingsFor(folder?.uri);
  if (!settings.enable) {
    return;
  }
  const folderPath = folder?.uri.fsPath;
  const command = serverCommand(settings, folderPath, await pythonExtensionInterpreter(folder?.uri));
  if (clients.has(key)) {
    return; // started while we asked the Python extension
  }
  if (command === undefined) {
    if (!reportedMissing.has(key)) {
      reportedMissing.add(key);
      const where = folder ? ` for ${folder.name}` : '';
      const choice = await vscode.window.showErrorMessage(
        `jaxfix: cannot find the jaxfix language server${where}. Install it (pip install 'jaxfix[lsp]') or set jaxfix.path / jaxfix.interpreter.`,
        'Open settings',
      );
      if (choice === 'Open settings') {
        void vscode.commands.executeCommand('workbench.action.openSettings', 'jaxfix');
      }
    }
    return;
  }
  output.appendLine(`jaxfix: starting ${[command.command, ...command.args].join(' ')} (from ${command.source})${folder ? ` for ${folder.uri.fsPath}` : ''}`);
  const serverOptions: ServerOptions = {
    command: command.command,
    args: command.args,
    options: { cwd: command.cwd },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: selectorFor(folder),
    workspaceFolder: folder,
    initializationOptions: initializationOptions(settings),
    outputChannel: output,
    traceOutputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
    middleware: folder === undefined ? outsideFoldersOnly() : undefined,
    // The client syncs every notebook the server's notebookSelector matches, whatever the
    // documentSelector says: without this each folder's server (and the one for no folder)
    // would be sent, and lint, every notebook in the window.
    notebookDocumentOptions: {
      filterCells: (notebook, cells) => (folderOfUri(notebook.uri)?.uri.toString() ?? DEFAULT_KEY) === key ? cells : [],
    },
  };
  const client = new JaxfixClient('jaxfix', folder ? `jaxfix (${folder.name})` : 'jaxfix', serverOptions, clientOptions);
  clients.set(key, client);
  try {
    await client.start();
  } catch (error) {
    clients.delete(key);
    output.appendLine(`jaxfix: the server did not start: ${String(error)}`);
    void vscode.window.showErrorMessage(`jaxfix: the language server did not start (${command.command}); see the jaxfix output.`);
  }
}

async function stopClient(key: string): Promise<void> {
  const client = clients.get(key);
  clients.delete(key);
  if (client !== undefined) {
    try {
      await client.stop();
    } catch (error) {
      output.appendLine(`jaxfix: stopping the server: ${String(error)}`);
    }
  }
}

async function restartAll(): Promise<void> {
  await Promise.all([...clients.keys()].map(stopClient));
  reportedMissing.clear();
  for (const document of vscode.workspace.textDocuments) {
    await ensureClient(document);
  }
}

function clientFor(uri: vscode.Uri): JaxfixClient | undefined {
  const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  const folder = document ? folderOf(document) : vscode.workspace.getWorkspaceFolder(uri);
  return clients.get(folder?.uri.toString() ?? DEFAULT_KEY);
}

/** `jaxfix.fixAll`: the server's `source.fixAll.jaxfix` action for the active editor, applied. */
async function fixAll(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (editor === undefined || !isPython(editor.document)) {
    void vscode.window.showInformationMessage('jaxfix: open a Python file to fix.');
    return;
  }
  const document = editor.document;
  const whole = new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length));
  const found = await vscode.commands.executeCommand<vscode.CodeAction[]>(
    'vscode.executeCodeActionProvider', document.uri, whole, FIX_ALL_KIND,
  );
  const action = (found ?? []).find((a) => a.kind?.value === FIX_ALL_KIND && a.edit !== undefined);
  if (action === undefined) {
    void vscode.window.showInformationMessage('jaxfix: nothing safely fixable in this file.');
    return;
  }
  await vscode.workspace.applyEdit(action.edit!);
}

/** `jaxfix.verifyFix` (offered by the server next to each quick fix): sent to the server that owns the document. */
async function verifyFix(...args: unknown[]): Promise<unknown> {
  const uri = typeof args[0] === 'string' ? vscode.Uri.parse(args[0]) : vscode.window.activeTextEditor?.document.uri;
  const client = uri ? clientFor(uri) : undefined;
  if (client === undefined) {
    void vscode.window.showInformationMessage('jaxfix: no jaxfix server owns this document.');
    return undefined;
  }
  return client.sendRequest(ExecuteCommandRequest.type, { command: VERIFY_COMMAND, arguments: args });
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel('jaxfix');
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand('jaxfix.fixAll', fixAll),
    vscode.commands.registerCommand(VERIFY_COMMAND, verifyFix),
    vscode.commands.registerCommand('jaxfix.restart', restartAll),
    vscode.commands.registerCommand('jaxfix.showLogs', () => output.show()),
    vscode.workspace.onDidOpenTextDocument((document) => void ensureClient(document)),
    vscode.workspace.onDidOpenNotebookDocument((notebook) => void ensureNotebookClient(notebook)),
    vscode.workspace.onDidChangeWorkspaceFolders(async (event) => {
      await Promise.all(event.removed.map((folder) => stopClient(folder.uri.toString())));
    }),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      const affected = [...clients.keys()].filter((key) =>
        event.affectsConfiguration('jaxfix', key === DEFAULT_KEY ? undefined : vscode.Uri.parse(key)),
      );
      if (!event.affectsConfiguration('jaxfix')) {
        return;
      }
      await Promise.all(affected.map(stopClient));
      reportedMissing.clear();
      for (const document of vscode.workspace.textDocuments) {
        await ensureClient(document); // restarts the stopped ones, and starts a folder just enabled
      }
    }),
  );
  for (const document of vscode.workspace.textDocuments) {
    await ensureClient(document);
  }
  for (const notebook of vscode.workspace.notebookDocuments) {
    await ensureNotebookClient(notebook);
  }
}

/** The server for a notebook's folder, started by its first Python cell. */
async function ensureNotebookClient(notebook: vscode.NotebookDocument): Promise<void> {
  const cell = notebook.getCells().find((c) => isPython(c.document));
  if (cell !== undefined) {
    await ensureClient(cell.document);
  }
}

export async function deactivate(): Promise<void> {
  await Promise.all([...clients.keys()].map(stopClient));
}
