// The long sweep: `bitexact check` on every `.py` file of this machine (or the first
// STRESS_MAX_FILES of them; STRESS_ROOTS=dir:dir to sweep elsewhere), in batches, as real processes.
// A fault is a batch that exits 2 with an error that is not a file's own (a crash, a stack trace) or
// that hangs past STRESS_BATCH_TIMEOUT_MS. Then the ≥ 40 MB document of issue 10 item 8, handed to
// the CLI and to the language server next to a small file that must still be reported.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { DidOpenTextDocumentNotification } from 'vscode-languageserver-protocol/node';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../test/support/checker.js';
import { startLsp } from '../test/support/lsp.js';
import { option, printFigures } from './figures.js';

const SKIP_DIRS = new Set(['/proc', '/sys', '/dev', '/run', '/tmp/bitexact-sweep']);

function* pythonFiles(roots: string[]): Generator<string> {
  const stack = [...roots];
  while (stack.length) {
    const dir = stack.pop()!;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const full = path.join(dir, e.name);
      if (e.isDirectory() && !SKIP_DIRS.has(full)) stack.push(full);
      else if (e.isFile() && e.name.endsWith('.py')) yield full;
    }
  }
}

const FLAGGED = 'import torch\n\ndef f(out, i, s):\n    out.index_add_(0, i, s.float())\n';

describe('stress: sweep', () => {
  it('checks every .py file of the machine without a crash or a hang', () => {
    const max = option('STRESS_MAX_FILES', Infinity);
    const batchSize = option('STRESS_BATCH', 400);
    const timeout = option('STRESS_BATCH_TIMEOUT_MS', 600_000);
    const roots = (process.env['STRESS_ROOTS'] ?? '/').split(':');
    const files: string[] = [];
    for (const file of pythonFiles(roots)) {
      files.push(file);
      if (files.length >= max) break;
    }
    let findings = 0;
    let skipped = 0;
    const faults: string[] = [];
    const start = Date.now();
    for (let i = 0; i < files.length; i += batchSize) {
      const batch = files.slice(i, i + batchSize);
      const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/bitexact.cjs'), 'check', '--format', 'json', ...batch], { encoding: 'utf8', maxBuffer: 1 << 30, timeout, cwd: '/' });
      if (r.error || r.status === null) {
        faults.push(`batch ${i / batchSize}: ${r.error?.message ?? `killed by ${r.signal}`} (first file ${batch[0]})`);
        continue;
      }
      skipped += (r.stderr.match(/^skipped /gm) ?? []).length;
      if (/^\s+at .+:\d+:\d+\)?$/m.test(r.stderr) || /RuntimeError|RangeError|TypeError/.test(r.stderr)) faults.push(`batch ${i / batchSize}: ${r.stderr.split('\n').find((l) => /Error/.test(l))}`);
      try {
        findings += JSON.parse(r.stdout).diagnostics.length;
      } catch {
        faults.push(`batch ${i / batchSize}: exit ${r.status}, no JSON report: ${r.stderr.slice(0, 300)}`);
      }
    }
    printFigures('Sweep', { 'files swept': files.length, batches: Math.ceil(files.length / batchSize), findings, 'files skipped (with a reason)': skipped, faults: faults.length, seconds: Math.round((Date.now() - start) / 1000) });
    for (const f of faults) process.stdout.write(`  fault: ${f}\n`);
    expect(faults).toEqual([]);
  });

  it('a 40 MB file is refused and the others are reported, in the CLI and in the server', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-40mb-'));
    const line = 'x.scatter_add_(0, i, v)  # a line of a generated file, padded to be long enough\n';
    const huge = `import torch\n${line.repeat(Math.ceil(41e6 / line.length))}`;
    fs.writeFileSync(path.join(dir, 'huge.py'), huge);
    fs.writeFileSync(path.join(dir, 'small.py'), FLAGGED);
    const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/bitexact.cjs'), 'check', '.'], { cwd: dir, encoding: 'utf8', timeout: 300_000 });
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/^small\.py:4:9: BX101/m);
    expect(r.stderr).toMatch(/skipped huge\.py: 41\.\d MB, larger than max-file-size/);
    // The server, with the limit set far above 40 MB: it is capped at the parser's ceiling (32 MiB).
    const s = await startLsp(dir, { textDocument: { publishDiagnostics: { versionSupport: true } } }, { maxFileSize: 1000 });
    try {
      const open = (name: string, text: string) => {
        const uri = pathToFileURL(path.join(dir, name)).href;
        void s.connection.sendNotification(DidOpenTextDocumentNotification.type, { textDocument: { uri, languageId: 'python', version: 1, text } });
        return uri;
      };
      const hugeUri = open('huge.py', huge);
      expect((await s.nextPublish(hugeUri)).diagnostics[0]?.message).toMatch(/^bitexact did not check this file: 41\.\d MB/);
      const smallUri = open('small.py', FLAGGED);
      expect((await s.nextPublish(smallUri)).diagnostics.map((d) => d.code)).toEqual(['BX101']);
    } finally {
      await s.close();
    }
    printFigures('40 MB document', { 'bytes': huge.length, 'CLI exit': r.status ?? 'none', 'small file reported after it': 'yes' });
  }, 600_000);
});
