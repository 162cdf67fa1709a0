// Issue 14 item 1 (the server's half) and issue 10 (a workspace scan must not hold the server): the
// "check workspace" command and the start-up mode scan analyse many closed files in worker threads,
// as `bitexact check` does. The real server over stdio on a generated project of 63 files, whose
// deterministic mode is switched on by a function one entry point calls (so the analyses' calls,
// made in the workers, decide it): the findings published equal those of one thread, file by file,
// and those `bitexact check` prints, cross-file passes included (a caller under no_grad in another
// file).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { ExecuteCommandRequest } from 'vscode-languageserver-protocol/node';
import type { Diagnostic } from 'vscode-languageserver-protocol/node';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';
import { LspSession, startLsp } from '../support/lsp.js';

let session: LspSession | undefined;
afterEach(async () => {
  await session?.close();
  session = undefined;
});

const MODULES = 60;

/** A project: `MODULES` model files with hazards of several rules, and one entry point per mode. */
function project(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-ws-threads-'));
  fs.mkdirSync(path.join(dir, 'pkg'));
  fs.writeFileSync(path.join(dir, 'pkg/__init__.py'), '');
  for (let i = 0; i < MODULES; i++) {
    const body = [
      'import torch',
      'import torch.nn.functional as F',
      '',
      `def combine_${i}(out, index, src):`,
      `    out.index_add_(0, index, src * ${i + 1}.0)`,
      '    return out',
      '',
      `def upsample_${i}(x):`,
      i % 3 === 0 ? "    return F.interpolate(x, scale_factor=2, mode='bilinear')" : '    return x * 2',
      '',
      i % 4 === 0 ? `def histogram_${i}(x):\n    return torch.histc(x.cuda(), bins=${i + 4})\n` : '',
      // A smoke entry point in every module: the start-up mode scan reads them all (in the workers).
      'if __name__ == "__main__":',
      `    print(upsample_${i}(torch.ones(1, 1, 2, 2)))`,
    ];
    fs.writeFileSync(path.join(dir, `pkg/model_${i}.py`), body.join('\n') + '\n');
  }
  // A project of its own (mode off) that trains, with a backward-only op whose one caller, in
  // another file, runs under no_grad: never differentiated (Checker.checkProgram's cross-file pass,
  // which the server's check runs too).
  fs.mkdirSync(path.join(dir, 'side/gen'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'side/pyproject.toml'), '[tool.bitexact]\n');
  fs.writeFileSync(path.join(dir, 'side/gen/__init__.py'), '');
  fs.writeFileSync(path.join(dir, 'side/gen/decode.py'), 'import torch.nn.functional as F\n\n\ndef enlarge(x):\n    return F.interpolate(x, scale_factor=2, mode="bilinear")\n');
  fs.writeFileSync(path.join(dir, 'side/gen/sample.py'), 'import torch\nfrom gen.decode import enlarge\n\n\n@torch.no_grad()\ndef sample(x):\n    return enlarge(x)\n');
  fs.writeFileSync(path.join(dir, 'side/fit.py'), 'import torch\n\nif __name__ == "__main__":\n    torch.manual_seed(0)\n    w = torch.ones(2, requires_grad=True)\n    (w * 2).sum().backward()\n');
  fs.writeFileSync(path.join(dir, 'pkg/boot.py'), `import torch\n\ndef setup():\n    torch.manual_seed(0)\n    torch.use_deterministic_algorithms(True)\n`);
  fs.writeFileSync(path.join(dir, 'train.py'), 'import torch\nfrom pkg.boot import setup\nfrom pkg.model_0 import combine_0\n\nif __name__ == "__main__":\n    setup()\n    loss = combine_0(torch.zeros(4), torch.tensor([0, 1]), torch.ones(2)).sum()\n    loss.backward()\n');
  return dir;
}

const view = (items: Diagnostic[]) => items.map((d) => `${d.range.start.line + 1} ${d.code} ${d.severity}`).sort();

/** Runs the workspace check and returns its summary and the last diagnostics published per file. */
async function checkWorkspace(dir: string, env: Record<string, string>): Promise<{ summary: unknown; byFile: Map<string, string[]> }> {
  session = await startLsp(dir, { textDocument: { diagnostic: { dynamicRegistration: false } } }, {}, { env });
  const summary = await session.connection.sendRequest(ExecuteCommandRequest.type, { command: 'bitexact.server.checkWorkspace' });
  const byFile = new Map<string, string[]>();
  for (const p of session.published) byFile.set(p.uri, view(p.diagnostics));
  await session.close();
  session = undefined;
  return { summary, byFile };
}

function cliByFile(dir: string): Map<string, string[]> {
  const report = JSON.parse(runCli(['check', '--format', 'json', '.'], dir).stdout);
  const severity: Record<string, number> = { error: 1, warning: 2, info: 3 };
  const byFile = new Map<string, string[]>();
  for (const d of report.diagnostics as Array<{ path: string; rule: string; severity: string; range: { start: { line: number } } }>) {
    const uri = pathToFileURL(path.join(dir, d.path)).href;
    byFile.set(uri, [...(byFile.get(uri) ?? []), `${d.range.start.line} ${d.rule} ${severity[d.severity]}`]);
  }
  for (const [uri, items] of byFile) byFile.set(uri, items.sort());
  return byFile;
}

describe('language server: the workspace check in worker threads', () => {
  it('publishes what one thread and bitexact check find, with the mode switched on by a called function', async () => {
      const dir = project();
      const threaded = await checkWorkspace(dir, {});
      const single = await checkWorkspace(dir, { BITEXACT_THREADS: '1' });
      expect(threaded.summary).toEqual(single.summary);
      expect(threaded.summary).toMatchObject({ files: MODULES + 7 });
      const nonEmpty = (m: Map<string, string[]>) => new Map([...m].filter(([, items]) => items.length > 0));
      expect(nonEmpty(threaded.byFile)).toEqual(nonEmpty(single.byFile));
      expect(nonEmpty(threaded.byFile)).toEqual(cliByFile(dir));
      // The mode decides: the switch reached from the entry point makes index_add_ deterministic
      // and histc raise.
      const published = (name: string) => threaded.byFile.get(pathToFileURL(path.join(dir, `pkg/${name}.py`)).href)!;
      expect(published('model_1').some((d) => d.includes('BX101'))).toBe(false);
      expect(published('model_0').some((d) => d.endsWith('BX116 1'))).toBe(true);
      expect(threaded.byFile.get(pathToFileURL(path.join(dir, 'side/gen/decode.py')).href)).toEqual([]);
  });
});
