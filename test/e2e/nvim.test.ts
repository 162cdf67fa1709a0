// Neovim as a second real LSP client: headless Neovim 0.7.2 starts `bitexact lsp --stdio` with
// vim.lsp.start_client (push diagnostics only, no pull), opens files of a copy of the CLI fixture
// project, and must receive exactly the findings `bitexact check --format json` prints for them.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { copyFixture, runCli } from '../support/cli.js';
import { assertPresent, Prerequisite, shouldSkip, versionOf } from './prereq.js';

const SUITE = 'e2e nvim';
const FILES = ['train.py', 'pkg/model.py'];
/** The Neovim to run (BITEXACT_NVIM overrides the one on PATH). */
const NVIM = process.env['BITEXACT_NVIM'] || 'nvim';

function prerequisites(): Prerequisite {
  const version = versionOf(NVIM);
  if (!version) return { missing: [`${NVIM} does not run (Debian: apt-get install neovim)`] };
  // vim.lsp.start_client and the handler signature the script uses exist from 0.7 on.
  const m = /NVIM v(\d+)\.(\d+)/.exec(version);
  if (!m || Number(m[1]) === 0 && Number(m[2]) < 7) return { missing: [`nvim 0.7 or later is needed, found "${version}"`] };
  return { missing: [] };
}

const pre = prerequisites();
const skip = shouldSkip(SUITE, pre);

interface NvimRun {
  status: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

const scratch: string[] = [];
afterAll(() => {
  for (const dir of scratch) fs.rmSync(dir, { recursive: true, force: true });
});

/** Runs the Lua client in its own process group; the group is killed when it overruns. */
function runNvim(project: string, files: string[], timeoutMs: number): Promise<NvimRun> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-nvim-home-'));
  scratch.push(home);
  const env = {
    ...process.env,
    // Keep Neovim's swap, shada, state and LSP log out of the real home.
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, 'config'),
    XDG_DATA_HOME: path.join(home, 'data'),
    XDG_STATE_HOME: path.join(home, 'state'),
    XDG_CACHE_HOME: path.join(home, 'cache'),
    BITEXACT_LSP_CMD: [process.execPath, path.join(ROOT, 'bin/bitexact.cjs'), 'lsp', '--stdio'].join('\t'),
    BITEXACT_ROOT: project,
    BITEXACT_FILES: files.map((f) => path.join(project, f)).join('\t'),
    BITEXACT_WAIT_MS: String(timeoutMs - 5_000),
    NO_COLOR: '1',
  };
  const script = path.join(__dirname, 'nvim-diagnostics.lua');
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(NVIM, ['--headless', '--clean', '-n', '-u', script], { cwd: project, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const killGroup = () => {
      try {
        process.kill(-child.pid!, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(killGroup, timeoutMs);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (status) => {
      clearTimeout(timer);
      killGroup(); // the language server, should it outlive its client
      resolve({ status, stdout, stderr, ms: Date.now() - started });
    });
  });
}

interface Published {
  uri: string;
  diagnostics: Array<{
    range: { start: { line: number; character: number } };
    code?: string | number;
    severity?: number;
    source?: string;
    message: string;
  }>;
}

const SEVERITY: Record<string, number> = { error: 1, warning: 2, info: 3, hint: 4 };

/** `line:col code severity message` (0-based) of what `bitexact check --format json` prints for one file. */
function cliView(project: string, relative: string): string[] {
  const report = JSON.parse(runCli(['check', '--format', 'json', '.'], project).stdout);
  return report.diagnostics
    .filter((d: { path: string }) => d.path === relative)
    .map(
      (d: { range: { start: { line: number; column: number } }; rule: string; severity: string; message: string }) =>
        `${d.range.start.line - 1}:${d.range.start.column - 1} ${d.rule} ${SEVERITY[d.severity]} ${d.message}`,
    );
}

const nvimView = (p: Published) => p.diagnostics.map((d) => `${d.range.start.line}:${d.range.start.character} ${d.code} ${d.severity} ${d.message}`);

describe('Neovim 0.7 as an LSP client of bitexact lsp --stdio', () => {
  it.skipIf(skip)('receives the diagnostics bitexact check prints, for each open file', async () => {
    assertPresent(SUITE, pre);
    const project = copyFixture('cli-project');
    scratch.push(project);
    const run = await runNvim(project, FILES, 60_000);
    const detail = `nvim exited ${run.status} after ${run.ms} ms\nstdout:\n${run.stdout}\nstderr:\n${run.stderr}`;
    expect(run.status, detail).toBe(0);
    console.info(`[${SUITE}] ${run.stdout.split('\n').find((l) => l.startsWith('BITEXACT_CLIENT'))?.slice(16)}: diagnostics for ${FILES.length} files in ${run.ms} ms`);

    const published = new Map<string, Published>();
    for (const line of run.stdout.split('\n')) {
      if (!line.startsWith('BITEXACT_DIAGNOSTICS ')) continue;
      const p = JSON.parse(line.slice('BITEXACT_DIAGNOSTICS '.length)) as Published;
      published.set(p.uri, p);
    }
    for (const file of FILES) {
      const uri = pathToFileURL(path.join(project, file)).href;
      const got = published.get(uri);
      expect(got, `${file}: no diagnostics published\n${detail}`).toBeDefined();
      const expected = cliView(project, file);
      expect(expected.length, `${file}: the fixture should have findings`).toBeGreaterThan(0);
      expect(nvimView(got!), file).toEqual(expected);
      for (const d of got!.diagnostics) expect(d.source).toBe('bitexact');
    }
  });
});
