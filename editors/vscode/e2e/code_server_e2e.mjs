// The packaged extension in a real VS Code: code-server (from npm) driven by Debian's Chromium
// through playwright-core. A manual check (see ../README.md, "End-to-end in code-server"), not
// part of `npm test` or CI: it needs a code-server install and a browser.
//
// It installs the .vsix, opens a workspace with one JAX file, waits for the jaxfix diagnostics
// in the Problems panel, applies a jaxfix quick fix through Ctrl+. and saves, then reads the
// file back from disk and checks the edit (the finding is gone, the program prints the same).
//
//   node code_server_e2e.mjs --code-server DIR --vsix FILE --jaxfix EXE [--python EXE]
//        [--chromium /usr/bin/chromium] [--work /tmp/vscode-e2e/run] [--shots DIR]
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';

const { values: opt } = parseArgs({
  options: {
    'code-server': { type: 'string' },
    vsix: { type: 'string' },
    jaxfix: { type: 'string' },
    python: { type: 'string' },
    chromium: { type: 'string', default: '/usr/bin/chromium' },
    work: { type: 'string', default: '/tmp/vscode-e2e/run' },
    shots: { type: 'string' },
    port: { type: 'string', default: '18080' },
    trace: { type: 'boolean', default: false }, // jaxfix.trace.server = verbose: the LSP messages in the jaxfix output log under --work/data/logs
  },
});
for (const name of ['code-server', 'vsix', 'jaxfix']) {
  if (!opt[name]) {
    console.error(`missing --${name}`);
    process.exit(2);
  }
}
const codeServer = path.resolve(opt['code-server'], 'out/node/entry.js');
const vsix = path.resolve(opt.vsix);
const jaxfix = path.resolve(opt.jaxfix);
const python = opt.python ? path.resolve(opt.python) : path.join(path.dirname(jaxfix), 'python');
const work = path.resolve(opt.work);
const shots = path.resolve(opt.shots ?? work);
const port = Number(opt.port);

// The workspace: a traced `if` in a jitted function (JAX301) and a jit of a fresh partial in a loop (JAX201).
const DEMO = `from functools import partial

import jax
import jax.numpy as jnp


@jax.jit
def signed_total(x):
    if x.sum() > 0:
        return x.sum()
    return -x.sum()


def scale(x, factor):
    return x * factor


def run(xs):
    out = []
    for x in xs:
        out.append(jax.jit(partial(scale, factor=2.0))(x))
    return out


if __name__ == "__main__":
    print(run([jnp.ones(3), jnp.arange(3.0)]))  # signed_total raises until JAX301 is fixed
`;
// A notebook whose one cell has a traced `if` (JAX301): cells reach the server as vscode-notebook-cell documents.
const NOTEBOOK = JSON.stringify({
  cells: [{
    cell_type: 'code', execution_count: null, metadata: {}, outputs: [],
    source: ['import jax\n', '\n', '\n', '@jax.jit\n', 'def f(x):\n', '    if x > 0:\n', '        return x\n', '    return -x\n'],
  }],
  metadata: {
    kernelspec: { display_name: 'Python 3', language: 'python', name: 'python3' },
    language_info: { name: 'python' },
  },
  nbformat: 4,
  nbformat_minor: 5,
}, null, 1);
const FIX_LINE = 21; // the JAX201 site, 1-based
const FIX_CODE = 'JAX201';

fs.rmSync(work, { recursive: true, force: true });
const ws = path.join(work, 'ws');
const userData = path.join(work, 'data');
const extensions = path.join(work, 'extensions');
fs.mkdirSync(path.join(ws, '.vscode'), { recursive: true });
fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
fs.mkdirSync(shots, { recursive: true });
const demoPath = path.join(ws, 'demo.py');
fs.writeFileSync(demoPath, DEMO);
fs.writeFileSync(path.join(ws, 'cells.ipynb'), NOTEBOOK);
fs.writeFileSync(path.join(ws, '.vscode/settings.json'), JSON.stringify({ 'jaxfix.path': [jaxfix], ...(opt.trace ? { 'jaxfix.trace.server': 'verbose' } : {}) }, null, 2));
fs.writeFileSync(path.join(userData, 'User/settings.json'), JSON.stringify({
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.enableExperiments': false,
  'security.workspace.trust.enabled': false,
  'telemetry.telemetryLevel': 'off',
  'extensions.ignoreRecommendations': true,
  'update.mode': 'none',
  'editor.minimap.enabled': false,
}, null, 2));

const config = path.join(work, 'config.yaml');
fs.writeFileSync(config, 'auth: none\ncert: false\n'); // not ~/.config/code-server/config.yaml
const common = ['--config', config, '--user-data-dir', userData, '--extensions-dir', extensions];
function log(...args) {
  console.log(`[${new Date().toISOString().slice(11, 19)}]`, ...args);
}

log('installing', vsix);
const install = spawnSync(process.execPath, [codeServer, ...common, '--install-extension', vsix], { encoding: 'utf8' });
process.stdout.write(install.stdout + install.stderr);
if (install.status !== 0) {
  throw new Error(`--install-extension failed (${install.status})`);
}
const listed = spawnSync(process.execPath, [codeServer, ...common, '--list-extensions', '--show-versions'], { encoding: 'utf8' });
log('extensions:', listed.stdout.trim());
if (!/^jaxfix\.jaxfix@/m.test(listed.stdout)) {
  throw new Error('jaxfix.jaxfix is not in --list-extensions');
}

log('starting code-server on port', port);
const server = spawn(process.execPath, [
  codeServer, ...common, '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`,
  '--disable-telemetry', '--disable-update-check', '--disable-workspace-trust', '--disable-getting-started-override', ws,
], { stdio: ['ignore', 'pipe', 'pipe'], detached: true }); // its own process group: its helpers (file watcher, extension host) end with it
const serverLog = fs.createWriteStream(path.join(work, 'code-server.log'));
server.stdout.pipe(serverLog);
server.stderr.pipe(serverLog);

async function waitForHttp(url, ms) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    try {
      const response = await fetch(url);
      if (response.ok) {
        return;
      }
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${url} did not answer in ${ms} ms`);
}

/** What `jaxfix check` says about the file on disk: the codes found. */
function codesOnDisk() {
  const r = spawnSync(jaxfix, ['check', '--select', 'ALL', '--no-cache', '--output-format', 'json', '-q', demoPath], { encoding: 'utf8' });
  return JSON.parse(r.stdout).map((f) => f.code).sort();
}

function runDemo() {
  const r = spawnSync(python, [demoPath], { encoding: 'utf8', env: { ...process.env, JAX_PLATFORMS: 'cpu' } });
  if (r.status !== 0) {
    throw new Error(`demo.py failed: ${r.stderr}`);
  }
  return r.stdout.trim();
}

let browser;
let failed = false;
try {
  const before = runDemo();
  log('demo.py prints', JSON.stringify(before), '; jaxfix check on disk:', codesOnDisk().join(' '));
  await waitForHttp(`http://127.0.0.1:${port}/healthz`, 60_000);
  browser = await chromium.launch({ executablePath: opt.chromium, args: ['--no-sandbox'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  page.on('pageerror', (e) => log('page error:', e.message));
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(ws)}`);
  await page.locator('.monaco-workbench').waitFor({ timeout: 120_000 });
  log('workbench loaded');
  await page.waitForTimeout(3000); // let the workbench settle before sending keys

  // Open demo.py with Quick Open.
  await page.keyboard.press('Control+P');
  await page.locator('.quick-input-widget input').waitFor();
  await page.keyboard.type('demo.py');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'demo.py' }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.monaco-editor .view-lines', { hasText: 'signed_total' }).waitFor({ timeout: 60_000 });
  log('demo.py open');

  // The Problems panel, with both findings.
  await page.keyboard.press('Control+Shift+M');
  const markers = page.locator('.markers-panel');
  await markers.waitFor({ timeout: 30_000 });
  for (const code of ['JAX301', FIX_CODE]) {
    await markers.locator('.monaco-list-row', { hasText: code }).first().waitFor({ timeout: 180_000 });
  }
  const problemRows = await markers.locator('.monaco-list-row').allInnerTexts();
  log('Problems panel:', problemRows.map((t) => t.replace(/\s+/g, ' ')).join(' | '));
  await page.waitForTimeout(500);
  await page.screenshot({ path: path.join(shots, 'diagnostics.png') });

  /** Ctrl+. at `line:column`, then the keyboard (as a user would; the menu's pointer block swallows mouse hovers) to the action `wanted` picks, then Enter. */
  async function quickFix(line, column, wanted, shot) {
    await page.locator('.monaco-editor .view-lines').first().click();
    await page.keyboard.press('Control+G');
    await page.locator('.quick-input-widget input').waitFor();
    await page.keyboard.type(`${line}:${column}`);
    await page.keyboard.press('Enter');
    await page.waitForTimeout(500);
    await page.keyboard.press('Control+.');
    const menu = page.locator('.action-widget');
    await menu.waitFor({ timeout: 30_000 });
    const items = menu.locator('.monaco-list-row.action');
    await items.first().waitFor();
    const titles = await items.allInnerTexts();
    log('quick fix menu:', titles.map((t) => t.replace(/\s+/g, ' ')).join(' | '));
    const focused = menu.locator('.monaco-list-row.action.focused');
    for (let i = 0; i < titles.length && !wanted((await focused.getAttribute('aria-label')) ?? ''); i++) {
      await page.keyboard.press('ArrowDown');
    }
    const chosen = (await focused.getAttribute('aria-label')) ?? '';
    if (!wanted(chosen)) {
      throw new Error(`no wanted action in the quick fix menu at ${line}:${column}`);
    }
    await page.waitForTimeout(300);
    if (shot) {
      await page.screenshot({ path: path.join(shots, shot) });
    }
    log('choosing:', chosen);
    await page.keyboard.press('Enter');
  }

  /** A command from the Command Palette (F1), by its title. */
  async function paletteCommand(title) {
    await page.keyboard.press('F1');
    await page.locator('.quick-input-widget input').waitFor();
    await page.keyboard.type(title);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor({ timeout: 30_000 });
    await page.keyboard.press('Enter');
  }

  /** Save, and wait until the file on disk differs from `previous`. */
  async function saveChanged(previous) {
    await page.keyboard.press('Control+S');
    const end = Date.now() + 30_000;
    while (fs.readFileSync(demoPath, 'utf8') === previous && Date.now() < end) {
      await new Promise((r) => setTimeout(r, 250));
    }
    return fs.readFileSync(demoPath, 'utf8');
  }

  // The lightbulb's "verify this fix" (the extension's jaxfix.verifyFix, routed to the folder's server):
  // its verdict comes back as a notification.
  await quickFix(FIX_LINE, 20, (label) => label.startsWith(`${FIX_CODE}:`) && /verify/i.test(label));
  const toast = page.locator('.notification-toast', { hasText: `jaxfix: ${FIX_CODE}:` });
  await toast.waitFor({ timeout: 180_000 });
  const verdict = (await toast.locator('.notification-list-item-message').innerText()).replace(/\s+/g, ' ');
  log('verify notification:', verdict);
  await page.screenshot({ path: path.join(shots, 'verify.png') });
  await page.keyboard.press('Escape');

  // The quick fix itself: hoist, applied through the menu and saved.
  await quickFix(FIX_LINE, 20, (label) => label.startsWith(`${FIX_CODE}:`) && !/noqa|verify/i.test(label), 'quickfix-menu.png');
  await page.locator('.monaco-editor .view-lines', { hasText: '_scale_jit' }).first().waitFor({ timeout: 30_000 });
  const afterQuickFix = await saveChanged(DEMO);
  // The fixed line's diagnostic leaves the Problems panel once the server re-analyses.
  await markers.locator('.monaco-list-row', { hasText: FIX_CODE }).waitFor({ state: 'detached', timeout: 60_000 });
  await page.waitForTimeout(500);
  await page.screenshot({ path: path.join(shots, 'fixed.png') });
  const hoisted = spawnSync('diff', ['-u', '--label', 'before', '--label', 'after', '-', demoPath], { input: DEMO, encoding: 'utf8' });
  log('demo.py on disk after the quick fix:\n' + hoisted.stdout);
  if (codesOnDisk().includes(FIX_CODE)) {
    throw new Error(`${FIX_CODE} is still reported after its quick fix`);
  }

  // "jaxfix: Fix all safely fixable problems" from the Command Palette: the JAX301 rewrite.
  await paletteCommand('jaxfix: Fix all safely fixable problems');
  await page.locator('.monaco-editor .view-lines', { hasText: 'lax.cond' }).first().waitFor({ timeout: 60_000 });
  await saveChanged(afterQuickFix);
  await markers.locator('.monaco-list-row', { hasText: 'JAX301' }).waitFor({ state: 'detached', timeout: 60_000 });
  log('fix-all applied; Problems panel:', (await markers.innerText()).replace(/\s+/g, ' '));

  // "jaxfix: Show the server log": the Output panel names the command the setting chose.
  await paletteCommand('jaxfix: Show the server log');
  // (with --trace the first line has scrolled out of the virtualized view: only the panel is checked)
  const outputView = page.locator('.output-view', opt.trace ? {} : { hasText: `jaxfix: starting ${jaxfix} lsp (from jaxfix.path)` });
  await outputView.waitFor({ timeout: 30_000 });
  await page.screenshot({ path: path.join(shots, 'server-log.png') });
  log('server log shows the jaxfix.path command');

  // A notebook: its cell's finding appears under the notebook in the Problems panel.
  await page.keyboard.press('Control+P');
  await page.locator('.quick-input-widget input').waitFor();
  await page.keyboard.type('cells.ipynb');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'cells.ipynb' }).first().waitFor();
  await page.keyboard.press('Enter');
  await page.locator('.notebook-editor .view-lines', { hasText: 'def f(x)' }).first().waitFor({ timeout: 60_000 });
  await page.keyboard.press('Control+Shift+M');
  await markers.locator('.monaco-list-row', { hasText: 'JAX301' }).first().waitFor({ timeout: 120_000 });
  log('notebook: Problems panel:', (await markers.innerText()).replace(/\s+/g, ' '));
  await page.waitForTimeout(2000); // a second server linting the notebook would add its copy by now
  const notebookRows = await markers.locator('.monaco-list-row', { hasText: 'JAX301' }).count();
  if (notebookRows !== 1) {
    throw new Error(`the notebook's JAX301 is listed ${notebookRows} times`);
  }
  await page.waitForTimeout(500);
  await page.screenshot({ path: path.join(shots, 'notebook.png') });

  // The cell's quick fix (edits built from the cell URIs as VS Code sent them), applied and saved.
  await page.locator('.notebook-editor .view-line', { hasText: 'if x > 0' }).first().click();
  await page.keyboard.press('End');
  await page.keyboard.press('Control+.');
  const nbMenu = page.locator('.action-widget');
  await nbMenu.waitFor({ timeout: 30_000 });
  const nbItems = nbMenu.locator('.monaco-list-row.action');
  await nbItems.first().waitFor();
  const nbTitles = await nbItems.allInnerTexts();
  log('notebook quick fix menu:', nbTitles.map((t) => t.replace(/\s+/g, ' ')).join(' | '));
  const nbFocused = nbMenu.locator('.monaco-list-row.action.focused');
  const nbWanted = (label) => label.startsWith('JAX301:') && !/noqa|verify/i.test(label);
  for (let i = 0; i < nbTitles.length && !nbWanted((await nbFocused.getAttribute('aria-label')) ?? ''); i++) {
    await page.keyboard.press('ArrowDown');
  }
  const nbChosen = (await nbFocused.getAttribute('aria-label')) ?? '';
  if (!nbWanted(nbChosen)) {
    throw new Error('no JAX301 fix in the notebook cell\'s quick fix menu');
  }
  log('choosing:', nbChosen);
  await page.keyboard.press('Enter');
  await page.locator('.notebook-editor .view-lines', { hasText: 'where' }).first().waitFor({ timeout: 30_000 });
  const notebookPath = path.join(ws, 'cells.ipynb');
  await page.keyboard.press('Control+S');
  const nbEnd = Date.now() + 30_000;
  while (!fs.readFileSync(notebookPath, 'utf8').includes('where') && Date.now() < nbEnd) {
    await new Promise((r) => setTimeout(r, 250));
  }
  const cellSource = JSON.parse(fs.readFileSync(notebookPath, 'utf8')).cells.map((c) => [].concat(c.source).join('')).join('\n# ---\n');
  log('cells.ipynb on disk after the cell quick fix:\n' + cellSource);
  await markers.locator('.monaco-list-row', { hasText: 'JAX301' }).waitFor({ state: 'detached', timeout: 60_000 });
  await page.screenshot({ path: path.join(shots, 'notebook-fixed.png') });
  const nbCheck = spawnSync(jaxfix, ['check', '--select', 'ALL', '--no-cache', '--output-format', 'json', '-q', notebookPath], { encoding: 'utf8' });
  const nbCodes = JSON.parse(nbCheck.stdout).map((f) => f.code);
  if (!cellSource.includes('where') || nbCodes.length > 0) {
    throw new Error(`cells.ipynb after its quick fix: ${nbCodes.join(' ') || 'no findings'}, where ${cellSource.includes('where') ? 'present' : 'absent'}`);
  }

  const after = fs.readFileSync(demoPath, 'utf8');
  if (after === DEMO) {
    throw new Error('demo.py on disk is unchanged after the quick fix and save');
  }
  const diff = spawnSync('diff', ['-u', '--label', 'before', '--label', 'after', '-', demoPath], { input: DEMO, encoding: 'utf8' });
  log('demo.py on disk after the quick fix and fix-all:\n' + diff.stdout);
  const codes = codesOnDisk();
  log('jaxfix check on disk after:', codes.join(' ') || '(none)');
  if (codes.length > 0) {
    throw new Error(`still reported after the quick fix and fix-all: ${codes.join(' ')}`);
  }
  const printed = runDemo();
  log('demo.py prints', JSON.stringify(printed));
  if (printed !== before) {
    throw new Error(`demo.py printed ${JSON.stringify(printed)} after the fix, ${JSON.stringify(before)} before`);
  }
  // signed_total raised (traced `if`) before fix-all; after it, it runs and keeps both branches.
  const call = spawnSync(python, ['-c', 'import demo, jax.numpy as jnp; print(demo.signed_total(jnp.ones(3)), demo.signed_total(-jnp.ones(3)))'],
    { cwd: ws, encoding: 'utf8', env: { ...process.env, JAX_PLATFORMS: 'cpu' } });
  log('signed_total(ones), signed_total(-ones):', call.stdout.trim() || call.stderr);
  if (call.stdout.trim() !== '3.0 3.0') {
    throw new Error('signed_total after fix-all does not give 3.0 for both signs');
  }
  log(`PASS: diagnostics shown, verify verdict shown, ${FIX_CODE} quick fix and fix-all applied through the UI, file saved, findings gone, same output, server log shown, notebook cell diagnosed once and fixed; screenshots in ${shots}`);
} catch (error) {
  failed = true;
  log('FAIL:', error.stack ?? error);
  if (browser) {
    const pages = browser.contexts().flatMap((c) => c.pages());
    if (pages.length > 0) {
      await pages[0].screenshot({ path: path.join(shots, 'failure.png') }).catch(() => {});
    }
  }
} finally {
  await browser?.close();
  try {
    process.kill(-server.pid, 'SIGTERM');
  } catch {
    // already gone
  }
  log('code-server log:', path.join(work, 'code-server.log'));
}
process.exit(failed ? 1 : 0);
