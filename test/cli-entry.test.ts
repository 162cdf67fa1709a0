// `bitexact check --entry SCRIPT`: the script and the workspace files it reaches through imports,
// resolved as Python resolves them, and nothing else of the folder (the suspects of a diverging pair).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from './support/cli.js';

function project(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-entry-'));
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
  }
  return dir;
}

const SCATTER = 'import torch\n\ndef combine(out, idx, src):\n    return out.scatter_add_(0, idx, src)\n';

describe('bitexact check --entry', () => {
  it('follows absolute, relative, package, submodule, conditional and src/ imports, each file once', () => {
    const dir = project({
      'pyproject.toml': '[project]\nname = "demo"\n',
      'scripts/train.py': [
        'import os',
        'import torch',
        'from pkg.model import Net',
        'import pkg.utils as U',
        'from pkg import layers',
        'import helpers',
        'try:',
        '    import fast_path',
        'except ImportError:',
        '    fast_path = None',
        'def main():',
        '    from lib import extra',
        '',
      ].join('\n'),
      'scripts/helpers.py': 'X = 1\n',
      'pkg/__init__.py': 'from .model import Net\n',
      'pkg/model.py': 'from . import ops\nfrom ..toplevel import thing\nimport pkg\n',
      'pkg/ops.py': SCATTER,
      'pkg/utils.py': 'Y = 2\n',
      'pkg/layers/__init__.py': 'from .conv import Conv\n',
      'pkg/layers/conv.py': SCATTER,
      'fast_path.py': SCATTER,
      'src/lib/__init__.py': '',
      'src/lib/extra.py': SCATTER,
      'unreached.py': SCATTER,
      'pkg/unreached_too.py': SCATTER,
    });
    const r = runCli(['check', '--entry', 'scripts/train.py', '--format', 'json'], dir);
    expect(r.status).toBe(1);
    const report = JSON.parse(r.stdout);
    const reached = Object.fromEntries(report.reached.map((x: { path: string; depth: number; importedBy?: string }) => [x.path, [x.depth, x.importedBy ?? null]]));
    expect(reached).toEqual({
      'scripts/train.py': [0, null],
      'scripts/helpers.py': [1, 'scripts/train.py'],
      'pkg/__init__.py': [1, 'scripts/train.py'],
      'pkg/model.py': [1, 'scripts/train.py'],
      'pkg/utils.py': [1, 'scripts/train.py'],
      'pkg/layers/__init__.py': [1, 'scripts/train.py'],
      'fast_path.py': [1, 'scripts/train.py'],
      'src/lib/__init__.py': [1, 'scripts/train.py'],
      'src/lib/extra.py': [1, 'scripts/train.py'],
      'pkg/ops.py': [2, 'pkg/model.py'],
      'pkg/layers/conv.py': [2, 'pkg/layers/__init__.py'],
    });
    expect(report.filesChecked).toBe(11);
    const flagged = [...new Set(report.diagnostics.map((d: { path: string }) => d.path))].sort();
    expect(flagged).toEqual(['fast_path.py', 'pkg/layers/conv.py', 'pkg/ops.py', 'src/lib/extra.py']);
    fs.rmSync(dir, { recursive: true });
  });

  it('is a usage error for an entry that is not a file', () => {
    const dir = project({ 'train.py': 'import torch\n' });
    expect(runCli(['check', '--entry', 'missing.py'], dir)).toMatchObject({ status: 2, stderr: expect.stringContaining("--entry: 'missing.py' is not a file") });
    fs.rmSync(dir, { recursive: true });
  });
});
