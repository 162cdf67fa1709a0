// Runs the built `bitexact` command as a real process.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './checker.js';

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function runCli(args: string[], cwd: string): CliResult {
  const result = spawnSync(process.execPath, [path.join(ROOT, 'bin/bitexact.cjs'), ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1' },
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** A scratch copy of a fixture directory (CLI tests write files and add untracked ones). */
export function copyFixture(name: string): string {
  const target = fs.mkdtempSync(path.join(os.tmpdir(), `bitexact-${name}-`));
  fs.cpSync(path.join(ROOT, 'test/fixtures', name), target, { recursive: true });
  return target;
}

/** Compares with test/golden/NAME, or rewrites it when UPDATE_GOLDEN=1. */
export function golden(name: string, actual: string): string {
  const file = path.join(ROOT, 'test/golden', name);
  if (process.env['UPDATE_GOLDEN'] === '1') fs.writeFileSync(file, actual);
  if (!fs.existsSync(file)) throw new Error(`missing golden file ${name}; run with UPDATE_GOLDEN=1`);
  return fs.readFileSync(file, 'utf8');
}
