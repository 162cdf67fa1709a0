// Drives a real VS Code for the e2e test: code-server 4.100.3 (installed by scripts/install-e2e.sh)
// serves the workbench, Debian's chromium shows it, and playwright-core presses the keys.
//
// Everything a run creates lives in one temp folder (user data, extensions, XDG dirs, the browser
// profile, logs), and every process it starts is found again by that folder or by its process group,
// so runs in parallel vitest workers do not meet and nothing outlives the test.
import { ChildProcess, execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BrowserContext, chromium, Locator, Page } from 'playwright-core';
import { inject } from 'vitest';
import '../support/provided.js';
import { Prerequisite, versionOf } from './prereq.js';

export const CODE_SERVER_VERSION = '4.100.3';
export const CHROMIUM = '/usr/bin/chromium';

export function e2eHome(): string {
  return process.env['BITEXACT_E2E_HOME'] || path.join(os.homedir(), '.cache/bitexact-e2e');
}

export function codeServerDir(): string {
  return path.join(e2eHome(), `code-server-${CODE_SERVER_VERSION}`);
}

export function codeServerBin(): string {
  return path.join(codeServerDir(), 'node_modules/.bin/code-server');
}

export function prerequisites(): Prerequisite {
  const missing: string[] = [];
  if (!fs.existsSync(CHROMIUM)) missing.push(`${CHROMIUM} is missing (Debian: apt-get install chromium)`);
  if (!fs.existsSync(path.join(codeServerDir(), '.complete')) || !versionOf(codeServerBin())) {
    missing.push(`code-server ${CODE_SERVER_VERSION} is not installed in ${codeServerDir()}`);
  }
  return { missing };
}

/** Kills every process whose command line mentions `marker` (a temp folder only this run uses). */
export function killByMarker(marker: string): number[] {
  const killed: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let cmdline: string;
    try {
      cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!cmdline.includes(marker)) continue;
    try {
      process.kill(Number(entry), 'SIGKILL');
      killed.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return killed;
}

function killGroup(pid: number | undefined, signal: NodeJS.Signals): boolean {
  if (!pid) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `vsce package` of the current dist/ into `outDir` (the global setup has just built dist/), once per
 * test run: the first e2e file packages it, later ones copy that package (the same build). Another
 * test run in the same tree may be rebuilding dist/ at that moment, which makes vsce fail with "file
 * data stream has unexpected number of bytes": that is retried.
 */
export async function packageVsix(root: string, outDir: string): Promise<string> {
  const out = path.join(outDir, 'bitexact.vsix');
  const packaged = path.join(inject('testRunDir'), 'bitexact.vsix');
  if (fs.existsSync(packaged)) {
    fs.copyFileSync(packaged, out);
    return out;
  }
  const made = await packageOnce(root, out);
  fs.copyFileSync(made, packaged);
  return made;
}

/** A command's exit status and output, without blocking the event loop while it runs. */
function runAsync(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv; timeoutMs: number }): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { cwd: options.cwd, env: options.env, encoding: 'utf8', timeout: options.timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      const status = error ? (typeof error.code === 'number' ? error.code : null) : 0;
      resolve({ status, stdout, stderr: stderr || (error && typeof error.code !== 'number' ? error.message : '') });
    });
  });
}

async function packageOnce(root: string, out: string): Promise<string> {
  let failure = '';
  for (let attempt = 1; attempt <= 3; attempt++) {
    fs.rmSync(out, { force: true });
    // Asynchronously, so that a caller can start the package and do something else meanwhile.
    const r = await runAsync(process.execPath, [path.join(root, 'node_modules/@vscode/vsce/vsce'), 'package', '--no-dependencies', '--allow-missing-repository', '--readme-path', 'client/README.md', '--out', out], {
      cwd: root,
      timeoutMs: 120_000,
    });
    if (r.status === 0 && fs.existsSync(out)) return out;
    failure = `vsce package failed (status ${r.status}, attempt ${attempt}):\n${r.stdout}\n${r.stderr}`;
    await sleep(3_000);
  }
  throw new Error(failure);
}

/** User settings that keep the workbench quiet and deterministic for a test. */
const USER_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'workbench.enableExperiments': false,
  'security.workspace.trust.enabled': false,
  'extensions.ignoreRecommendations': true,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'chat.commandCenter.enabled': false,
  'files.autoSave': 'off',
  'workbench.reduceMotion': 'on',
  'editor.hover.delay': 250,
  'editor.stickyScroll.enabled': false,
  'editor.minimap.enabled': false,
  'editor.fontSize': 15,
  'git.enabled': false,
};

export class CodeServer {
  private constructor(
    readonly dir: string,
    readonly url: string,
    private readonly child: ChildProcess,
    private readonly logFile: string,
  ) {}

  /**
   * Installs `vsix` into a fresh user-data and extensions dir under a new temp folder and starts
   * code-server on a free loopback port.
   */
  static async start(vsix: string): Promise<CodeServer> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-code-server-'));
    const userData = path.join(dir, 'user-data');
    const extensions = path.join(dir, 'extensions');
    fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
    fs.writeFileSync(path.join(userData, 'User/settings.json'), JSON.stringify(USER_SETTINGS, null, 2));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      XDG_CONFIG_HOME: path.join(dir, 'xdg/config'),
      XDG_DATA_HOME: path.join(dir, 'xdg/data'),
      XDG_CACHE_HOME: path.join(dir, 'xdg/cache'),
      XDG_STATE_HOME: path.join(dir, 'xdg/state'),
    };
    delete env['VSCODE_IPC_HOOK_CLI'];
    delete env['NODE_OPTIONS'];
    const common = ['--user-data-dir', userData, '--extensions-dir', extensions];

    // Asynchronously, so that chromium can start meanwhile (startEditor).
    const install = await runAsync(codeServerBin(), [...common, '--install-extension', vsix], { env, timeoutMs: 90_000 });
    const installed = fs.existsSync(extensions) && fs.readdirSync(extensions).some((e) => e.startsWith('bitexact.bitexact-'));
    if (install.status !== 0 || !installed) {
      throw new Error(`code-server --install-extension ${vsix} failed (${install.status}):\n${install.stdout}\n${install.stderr}`);
    }

    const logFile = path.join(dir, 'code-server.log');
    const log = fs.openSync(logFile, 'a');
    const child = spawn(
      codeServerBin(),
      [
        ...common,
        '--bind-addr',
        '127.0.0.1:0',
        '--auth',
        'none',
        '--disable-telemetry',
        '--disable-update-check',
        '--disable-workspace-trust',
        '--disable-getting-started-override',
        '--disable-file-downloads',
        '--ignore-last-opened',
      ],
      { env, detached: true, stdio: ['ignore', log, log] },
    );
    fs.closeSync(log);
    let url: string | undefined;
    let exited = false;
    child.on('exit', () => (exited = true));
    const deadline = Date.now() + 60_000;
    while (!url && !exited && Date.now() < deadline) {
      await sleep(200);
      const m = /HTTP server listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(fs.readFileSync(logFile, 'utf8'));
      if (m) url = m[1];
    }
    const server = new CodeServer(dir, url ?? '', child, logFile);
    if (!url) {
      const tail = server.logTail();
      await server.stop();
      throw new Error(`code-server did not start (${exited ? 'it exited' : 'no listening line in 60 s'}):\n${tail}`);
    }
    for (;;) {
      const ok = await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ok) break;
      if (Date.now() > deadline) {
        await server.stop();
        throw new Error(`code-server at ${url} never answered /healthz`);
      }
      await sleep(200);
    }
    return server;
  }

  logTail(chars = 4000): string {
    try {
      return fs.readFileSync(this.logFile, 'utf8').slice(-chars);
    } catch {
      return '';
    }
  }

  /** What the bitexact output channel of the extension host logged (the client and the server's stderr). */
  extensionLog(chars = 4000): string {
    const found: string[] = [];
    const walk = (d: string) => {
      for (const e of fs.existsSync(d) ? fs.readdirSync(d, { withFileTypes: true }) : []) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (/bitexact/i.test(e.name) || e.name === 'exthost.log') found.push(p);
      }
    };
    walk(path.join(this.dir, 'user-data/logs'));
    return found.map((f) => `--- ${path.relative(this.dir, f)}\n${fs.readFileSync(f, 'utf8').slice(-chars)}`).join('\n');
  }

  /** Stops code-server, its extension host and the language server (one process group), then removes the folder. */
  async stop(): Promise<void> {
    if (killGroup(this.child.pid, 'SIGTERM')) {
      const deadline = Date.now() + 3_000;
      while (this.child.exitCode === null && this.child.signalCode === null && Date.now() < deadline) await sleep(100);
      killGroup(this.child.pid, 'SIGKILL');
    }
    // Anything that left the group (the file watcher, a forked server) still names our folder.
    killByMarker(this.dir);
    // BITEXACT_E2E_KEEP=1 keeps the user data (logs of code-server, the extension host and the server).
    if (process.env['BITEXACT_E2E_KEEP'] === '1') console.info(`[e2e vscode] kept ${this.dir}`);
    else fs.rmSync(this.dir, { recursive: true, force: true, maxRetries: 3 });
  }
}

/**
 * code-server with `vsix` installed and chromium, started side by side (each takes seconds). Each is
 * handed to `started` as soon as it is up, so that the caller closes what did start when the other
 * failed; then the first failure is thrown.
 */
export async function startEditor(vsix: string, started: (up: CodeServer | Browser) => void): Promise<{ server: CodeServer; browser: Browser }> {
  const [server, browser] = await Promise.allSettled([CodeServer.start(vsix).then(keep), Browser.launch().then(keep)]);
  function keep<T extends CodeServer | Browser>(up: T): T {
    started(up);
    return up;
  }
  if (server.status === 'rejected') throw server.reason;
  if (browser.status === 'rejected') throw browser.reason;
  return { server: server.value, browser: browser.value };
}

export class Browser {
  private constructor(
    readonly context: BrowserContext,
    readonly page: Page,
    private readonly profile: string,
  ) {}

  /** Debian's chromium, headless, with nothing that reaches the network by itself. */
  static async launch(): Promise<Browser> {
    const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-chromium-'));
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1440, height: 1000 },
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--disable-default-apps',
        '--disable-extensions',
      ],
      timeout: 60_000,
    });
    const page = context.pages()[0] ?? (await context.newPage());
    return new Browser(context, page, profile);
  }

  async close(): Promise<void> {
    await Promise.race([this.context.close().catch(() => undefined), sleep(10_000)]);
    killByMarker(this.profile);
    fs.rmSync(this.profile, { recursive: true, force: true, maxRetries: 3 });
  }
}

// --- workbench steps ------------------------------------------------------------------------------

/** Monaco renders spaces as no-break spaces. */
export const plain = (s: string) => s.replace(/\u00a0/g, ' ');

export async function openWorkbench(page: Page, url: string, folder: string): Promise<void> {
  await page.goto(`${url}/?folder=${encodeURIComponent(folder)}`, { waitUntil: 'domcontentloaded' });
  await page.locator('.monaco-workbench').waitFor({ timeout: 60_000 });
  // The explorer lists the folder once the workbench has connected to the server.
  await page.locator('.explorer-folders-view .monaco-list-row').first().waitFor({ timeout: 60_000 });
}

/** Opens a workspace file through Quick Open (Ctrl+P), as a person would, and waits for its text. */
export async function openFile(page: Page, relative: string, expectText: string): Promise<Locator> {
  const input = page.locator('.quick-input-widget input');
  await page.keyboard.press('Control+P');
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  await input.fill(relative);
  const base = path.basename(relative);
  const dirname = path.dirname(relative);
  const pick = page
    .locator('.quick-input-list .monaco-list-row')
    .filter({ hasText: base })
    .filter({ hasText: dirname === '.' ? base : dirname })
    .first();
  await pick.waitFor({ timeout: 30_000 });
  await pick.click();
  const editor = page.locator('.editor-group-container.active .monaco-editor').first();
  await editor.locator('.view-lines').filter({ hasText: expectText }).waitFor({ timeout: 30_000 });
  await page.locator('.tab.active').filter({ hasText: base }).waitFor({ timeout: 15_000 });
  return editor;
}

/** Runs a command from the Command Palette (Ctrl+Shift+P) by its title. */
export async function runCommand(page: Page, title: string): Promise<void> {
  const input = page.locator('.quick-input-widget input');
  await page.keyboard.press('Control+Shift+P');
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  await input.fill(`>${title}`);
  await page.locator('.quick-input-list .monaco-list-row').filter({ hasText: title }).first().waitFor({ timeout: 15_000 });
  await page.keyboard.press('Enter');
}

/** Moves the cursor with Go to Line (Ctrl+G), 1-based like the CLI. */
export async function goTo(page: Page, line: number, column: number): Promise<void> {
  const input = page.locator('.quick-input-widget input');
  await page.keyboard.press('Control+G');
  await input.waitFor({ state: 'visible', timeout: 15_000 });
  await input.fill(`:${line}:${column}`);
  await page.keyboard.press('Enter');
  await input.waitFor({ state: 'hidden', timeout: 15_000 });
  await page.locator('.monaco-editor .cursors-layer .cursor').first().waitFor({ timeout: 5_000 });
  // The status bar shows the new position once the editor moved there.
  await page.locator('.statusbar-item', { hasText: `Ln ${line}, Col ${column}` }).waitFor({ timeout: 10_000 });
}

/** The visible text of the active editor. */
export async function editorText(editor: Locator): Promise<string> {
  return plain(await editor.locator('.view-lines').innerText());
}

/** Picks the Code Action menu (Ctrl+.) entry whose text contains `title`, with the arrow keys and Enter. */
export async function pickAction(page: Page, title: string, reopen?: () => Promise<void>): Promise<void> {
  const rows = page.locator('.action-widget .monaco-list-row');
  // A menu opened before the server answered the code-action request lists the editor's own
  // entries only; with `reopen` (what opened it) it is closed and opened again, as a user would.
  for (let attempt = 1; ; attempt++) {
    try {
      await rows.filter({ hasText: title }).first().waitFor({ timeout: 15_000 });
      break;
    } catch (error) {
      if (!reopen || attempt === 3) throw error;
      await page.keyboard.press('Escape');
      await reopen();
    }
  }
  const count = await rows.count();
  for (let i = 0; i <= count; i++) {
    const focused = await page.locator('.action-widget .monaco-list-row.focused').first().innerText().catch(() => '');
    if (plain(focused).includes(title)) {
      await page.keyboard.press('Enter');
      await page.locator('.action-widget').waitFor({ state: 'hidden', timeout: 10_000 });
      return;
    }
    await page.keyboard.press('ArrowDown');
  }
  throw new Error(`no Code Action menu entry "${title}" could be focused; entries: ${JSON.stringify((await rows.allInnerTexts()).map(plain))}`);
}
