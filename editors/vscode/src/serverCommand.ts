/**
 * How the extension starts `jaxfix lsp` for one workspace folder, and what it tells it.
 *
 * Kept free of the `vscode` module so the same code is run by the Node test against the
 * real server (test/lsp.test.ts): what the test starts is what the extension starts.
 */
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';

/** The extension's settings (`jaxfix.*`) for one folder. */
export interface JaxfixSettings {
  path: string[];
  interpreter: string[];
  args: string[];
  debounceMs: number;
}

export const DEFAULT_SETTINGS: JaxfixSettings = { path: [], interpreter: [], args: [], debounceMs: 200 };

/** A process to spawn: `command` with `args`, in `cwd`. */
export interface ServerCommand {
  command: string;
  args: string[];
  cwd?: string;
  /** Where the command came from, for the log and the error message when it fails to start. */
  source: string;
}

/** Expand `${workspaceFolder}`, `${userHome}`, a leading `~` and `${env:NAME}` the way VS Code's own settings do. */
export function expand(value: string, folder: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  let out = value.replace(/\$\{(workspaceFolder|workspaceRoot|userHome|env:([^}]+))\}/g, (whole, name: string, envName?: string) => {
    if (envName !== undefined) {
      return env[envName] ?? '';
    }
    if (name === 'userHome') {
      return os.homedir();
    }
    return folder ?? whole; // no folder (an untitled buffer): left as written, so the error names it
  });
  if (out === '~' || out.startsWith('~/') || out.startsWith('~\\')) {
    out = os.homedir() + out.slice(1);
  }
  return out;
}

function isFile(candidate: string): boolean {
  try {
    return fs.statSync(candidate).isFile();
  } catch {
    return false;
  }
}

/** The first executable called `name` on PATH (with PATHEXT on Windows), or undefined. */
export function which(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const exts = process.platform === 'win32' ? (env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';') : [''];
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) {
      continue;
    }
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      if (isFile(candidate)) {
        try {
          fs.accessSync(candidate, fs.constants.X_OK);
          return candidate;
        } catch {
          // not executable: keep looking
        }
      }
    }
  }
  return undefined;
}

/**
 * The command that runs the server, in this order: `jaxfix.path` (the first entry that
 * exists), `jaxfix.interpreter` (`python -m jaxfix lsp`), `jaxfix` on PATH, then the
 * interpreter the Python extension selected for the folder (`fallbackInterpreter`).
 * Undefined when none is found: the caller says so instead of spawning something that fails.
 */
export function serverCommand(
  settings: JaxfixSettings,
  folder: string | undefined,
  fallbackInterpreter?: string[],
  env: NodeJS.ProcessEnv = process.env,
): ServerCommand | undefined {
  const extra = settings.args.map((a) => expand(a, folder, env));
  const cwd = folder;
  if (settings.path.length > 0) {
    const found = settings.path.map((p) => expand(p, folder, env)).find((p) => isFile(p) || which(p, env) !== undefined);
    if (found !== undefined) {
      return { command: found, args: ['lsp', ...extra], cwd, source: 'jaxfix.path' };
    }
    return undefined;
  }
  if (settings.interpreter.length > 0) {
    const [python, ...lead] = settings.interpreter.map((p) => expand(p, folder, env));
    return { command: python, args: [...lead, '-m', 'jaxfix', 'lsp', ...extra], cwd, source: 'jaxfix.interpreter' };
  }
  const onPath = which('jaxfix', env);
  if (onPath !== undefined) {
    return { command: onPath, args: ['lsp', ...extra], cwd, source: 'PATH' };
  }
  if (fallbackInterpreter !== undefined && fallbackInterpreter.length > 0) {
    const [python, ...lead] = fallbackInterpreter;
    return { command: python, args: [...lead, '-m', 'jaxfix', 'lsp', ...extra], cwd, source: 'the Python extension\'s interpreter' };
  }
  return undefined;
}

/** The server's `initializationOptions` (read by `on_initialize` in jaxfix/lsp/server.py). */
export function initializationOptions(settings: JaxfixSettings): { debounceMs: number } {
  const ms = Number.isFinite(settings.debounceMs) ? Math.min(Math.max(Math.round(settings.debounceMs), 0), 10_000) : 200;
  return { debounceMs: ms };
}
