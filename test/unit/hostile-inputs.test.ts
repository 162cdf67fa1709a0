// Issue 10 item 12: inputs a hostile (or unlucky) user hands `bitexact check`. Each must give a clear
// message and leave the other files checked: a FIFO, bare-CR line endings, an invalid pyproject.toml
// in one project, --config to nothing, symlinked files in a walked directory, unknown torch versions
// and rule ids, UTF-16 files. The built command as a real process, on real files.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';

const FLAGGED = 'import torch\n\ndef f(out, i, s):\n    out.index_add_(0, i, s.float())\n';

function scratch(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-hostile-'));
}

function write(dir: string, files: Record<string, string | Buffer>): void {
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
}

/** The CLI; the timeout only keeps a hang from stalling the suite (a hang fails: status null). */
function check(args: string[], cwd: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/bitexact.cjs'), 'check', ...args], { cwd, encoding: 'utf8', timeout: 30_000, env: { ...process.env, NO_COLOR: '1' } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const noStackTrace = (text: string) => expect(text).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m);

describe('bitexact check on hostile inputs', () => {
  it.skipIf(process.platform === 'win32')('refuses a FIFO named on the command line instead of waiting on it', () => {
    const dir = scratch();
    write(dir, { 'ok.py': FLAGGED });
    expect(spawnSync('mkfifo', [path.join(dir, 'pipe.py')]).status).toBe(0);
    const r = check(['pipe.py', 'ok.py'], dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/pipe\.py: not a regular file \(a FIFO\)/);
    noStackTrace(r.stderr);
  });

  it('reads bare-CR line endings as Python does: right positions, no syntax error, fixes keep the endings', () => {
    const dir = scratch();
    write(dir, { 'cr.py': FLAGGED.replace(/\n/g, '\r'), 'lf.py': FLAGGED, 'mixed.py': 'import torch\r\nx = 1\r\rdef f(out, i, s):\n    out.index_add_(0, i, s.float())\n' });
    const r = check(['--format', 'json', '.'], dir);
    const report = JSON.parse(r.stdout);
    const at = (file: string) => report.diagnostics.filter((d: { path: string }) => d.path === file).map((d: { range: { start: unknown } }) => d.range.start);
    expect(at('cr.py')).toEqual(at('lf.py'));
    expect(at('cr.py')).toEqual([{ line: 4, column: 9 }]);
    expect(at('mixed.py')).toEqual([{ line: 5, column: 9 }]);
    expect(r.stderr).not.toMatch(/syntax error/);
    // A fix is written with the file's own line endings.
    write(dir, { 'bench.py': 'import torch\rtorch.backends.cudnn.benchmark = True\r' });
    check(['--fix', 'bench.py'], dir);
    expect(fs.readFileSync(path.join(dir, 'bench.py'), 'utf8')).toBe('import torch\rtorch.backends.cudnn.benchmark = False\r');
  });

  it('one invalid pyproject.toml is reported as a config error and the other projects are still checked', () => {
    const dir = scratch();
    write(dir, { 'a/pyproject.toml': '[tool.bitexact\nselect = [', 'a/train.py': FLAGGED, 'b/pyproject.toml': '[tool.bitexact]\n', 'b/train.py': FLAGGED });
    const r = check(['.'], dir);
    expect(r.status).toBe(2);
    expect(r.stdout).toMatch(/^b\/train\.py:4:9: BX101/m);
    expect(r.stdout).not.toMatch(/a\/train\.py/);
    expect(r.stderr).toMatch(/error: a\/pyproject\.toml: invalid TOML/);
    expect(r.stderr).toMatch(/1 file under a was not checked/);
    noStackTrace(r.stderr);
  });

  it('--config to a missing file or a directory is a clear error, not a stack trace', () => {
    const dir = scratch();
    write(dir, { 'train.py': FLAGGED });
    const missing = check(['--config', 'nope.toml', '.'], dir);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/^bitexact: error: --config nope\.toml: no such file$/m);
    noStackTrace(missing.stderr);
    const directory = check(['--config', '.', '.'], dir);
    expect(directory.status).toBe(2);
    expect(directory.stderr).toMatch(/^bitexact: error: --config \.: a directory, not a TOML file$/m);
    noStackTrace(directory.stderr);
  });

  it.skipIf(process.platform === 'win32')('notes a symlinked .py file in a walked directory', () => {
    const dir = scratch();
    write(dir, { 'elsewhere/real.py': FLAGGED, 'proj/own.py': 'x = 1\n' });
    fs.symlinkSync(path.join(dir, 'elsewhere/real.py'), path.join(dir, 'proj/linked.py'));
    const r = check(['proj'], dir);
    expect(r.stderr).toMatch(/note: skipped proj\/linked\.py: a symbolic link/);
    // Named on the command line, the link is checked.
    expect(check(['proj/linked.py'], dir).stdout).toMatch(/BX101/);
  });

  it('warns about an unknown torch-version and unknown rule ids in [tool.bitexact.severity]', () => {
    const dir = scratch();
    write(dir, { 'pyproject.toml': '[tool.bitexact]\ntorch-version = "99.99"\n[tool.bitexact.severity]\nBX999 = "off"\nBX101 = "error"\n', 'train.py': FLAGGED });
    const r = check(['.'], dir);
    expect(r.stderr).toMatch(/warning: pyproject\.toml: torch-version 99\.99 is not a torch version bitexact knows/);
    expect(r.stderr).toMatch(/warning: pyproject\.toml: \[tool\.bitexact\.severity\]: BX999 is not a bitexact rule/);
    expect(r.stderr).not.toMatch(/BX101 is not/);
    expect(r.stdout).toMatch(/BX101 error/);
    expect(r.status).toBe(1);
  });

  it('calls a UTF-16 file UTF-16, not binary', () => {
    const dir = scratch();
    write(dir, { 'wide.py': Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('import torch\n', 'utf16le')]), 'wide_be.py': Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from('import torch\n', 'utf16le').swap16()]), 'nobom.py': Buffer.from('import torch\nx = 1\n', 'utf16le') });
    const r = check(['.'], dir);
    for (const file of ['wide.py', 'wide_be.py', 'nobom.py']) expect(r.stderr).toMatch(new RegExp(`skipped ${file.replace('.', '\\.')}: UTF-16 text`));
    expect(r.stderr).not.toMatch(/binary/);
  });
});
