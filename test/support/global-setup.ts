// Builds the bundle once before any test, so CLI tests run exactly what `npx bitexact` runs; and asks
// python3 once whether it can import torch (and gloo), for every test file that needs real torch
// (test/support/torch.ts): an `import torch` costs seconds of CPU, too much to repeat per file. Also
// makes this run's scratch folder (testRunDir), where the e2e files keep the one .vsix they install.
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import type { TorchFound } from './provided.js';

const ASK = [
  'import json',
  'found = {"torch": False, "gloo": False}',
  'try:',
  '    import torch, torch.distributed as d',
  '    found = {"torch": True, "gloo": bool(d.is_available() and d.is_gloo_available())}',
  'except Exception:',
  '    pass',
  'print(json.dumps(found))',
].join('\n');

/** The answer, asked while the bundle builds. */
function askPython(): Promise<TorchFound> {
  return new Promise((resolve) => {
    const none: TorchFound = { torch: false, gloo: false };
    execFile('python3', ['-c', ASK], { encoding: 'utf8' }, (error, stdout) => {
      try {
        resolve(error ? none : (JSON.parse(stdout.trim().split('\n').pop()!) as TorchFound));
      } catch {
        resolve(none);
      }
    });
  });
}

// Every project (vitest.config.mts: main, e2e) inherits this setup, and vitest runs it per project, in
// one process: the build and the question are done by the first and kept for the second.
const once = globalThis as { bitexactTestSetup?: { found: Promise<TorchFound>; runDir: string } };

export default async function setup(project: TestProject): Promise<() => void> {
  once.bitexactTestSetup ??= (() => {
    const found = askPython();
    execFileSync(process.execPath, [path.resolve(__dirname, '../../scripts/build.mjs')], { stdio: 'inherit' });
    return { found, runDir: fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-test-run-')) };
  })();
  const { found, runDir } = once.bitexactTestSetup;
  project.provide('torchFound', await found);
  project.provide('testRunDir', runDir);
  // Teardowns run once every project has ended.
  return () => fs.rmSync(runDir, { recursive: true, force: true });
}
