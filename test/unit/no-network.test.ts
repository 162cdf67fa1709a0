// Issue 10 item 14: check, compare and pair open no network socket. Each runs as a real process under
// strace (every process it starts followed, -f), and no socket of an internet family (AF_INET,
// AF_INET6) may be opened; local pipes and Unix sockets between bitexact and its children are fine.
// A control run that does connect shows the trace would see it.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';
import { copyFixture } from '../support/cli.js';

const hasStrace = spawnSync('strace', ['-V']).status === 0;

/** The internet-family socket() calls of `args` run under strace, and its exit status. */
function inetSockets(args: string[], cwd: string): { sockets: string[]; status: number | null } {
  const trace = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-strace-')), 'trace');
  const r = spawnSync('strace', ['-f', '-qq', '-e', 'trace=socket', '-o', trace, ...args], { cwd, encoding: 'utf8', timeout: 120_000 });
  const lines = fs.existsSync(trace) ? fs.readFileSync(trace, 'utf8').split('\n') : [];
  return { sockets: lines.filter((l) => /socket\(AF_INET6?,/.test(l)), status: r.status };
}

const cli = (...args: string[]) => [process.execPath, path.join(ROOT, 'bin/bitexact.cjs'), ...args];

describe.skipIf(!hasStrace)('no network sockets', () => {
  it('the trace sees a socket when one is opened (control)', () => {
    const { sockets } = inetSockets([process.execPath, '-e', "require('net').connect(9, '127.0.0.1').on('error', () => {})"], os.tmpdir());
    expect(sockets.length).toBeGreaterThan(0);
  });

  it('bitexact check opens none', () => {
    const r = inetSockets(cli('check', '--format', 'json', '.'), copyFixture('cli-project'));
    expect(r.status).toBe(1);
    expect(r.sockets).toEqual([]);
  });

  it('bitexact compare opens none', () => {
    const dir = path.join(ROOT, 'test/fixtures/runs');
    const r = inetSockets(cli('compare', 'metrics-a.csv', 'metrics-b.csv'), dir);
    expect([0, 1]).toContain(r.status);
    expect(r.sockets).toEqual([]);
  });

  it('bitexact pair opens none (its runs and its static check of the script included)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-pair-net-'));
    fs.writeFileSync(path.join(dir, 'train.py'), 'import os\nfor step in range(3):\n    print(f"step: {step} loss: {0.5 + (os.getpid() % 7) * 1e-9 * step!r}")\n');
    const r = inetSockets(cli('pair', '--', 'python3', 'train.py'), dir);
    expect([0, 1]).toContain(r.status);
    expect(r.sockets).toEqual([]);
  });
});
