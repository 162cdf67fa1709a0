// `bitexact check` on both cores gives the same bytes as on one: worker threads analyse the files,
// the main thread resolves the program (a mode switch in one file reaches the others) and orders.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/checker.js';
import { spawnSync } from 'node:child_process';

function check(dir: string, threads: string, format = 'json') {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/bitexact.cjs'), 'check', '--format', format, '.'], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', BITEXACT_THREADS: threads },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Two projects of many files: hazards, guards, suppressions, a broken file, a mode switch reached by a call. */
function writeProjects(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-threads-'));
  for (const project of ['alpha', 'beta']) {
    fs.mkdirSync(path.join(dir, project, 'pkg'), { recursive: true });
    fs.writeFileSync(path.join(dir, project, 'pyproject.toml'), `[project]\nname = "${project}"\n`);
    for (let i = 0; i < 40; i++) {
      const body = [
        'import torch',
        'import torch.nn.functional as F',
        `def step_${i}(x, idx, src, deterministic=False):`,
        `    out = torch.zeros(${i + 8}, device="cuda")`,
        '    out.index_add_(0, idx, src)',
        i % 3 === 0 ? '    out.scatter_add_(0, idx, src)  # bitexact: ignore[BX102]' : '    y = F.interpolate(x, scale_factor=2, mode="bilinear")',
        '    if deterministic:',
        '        return out.cumsum(0)',
        '    return torch.cumsum(out.flatten(), 0)',
        i === 7 ? 'def broken(:\n    pass' : '',
      ];
      fs.writeFileSync(path.join(dir, project, 'pkg', `m${i}.py`), `${body.join('\n')}\n`);
    }
  }
  // beta turns the mode on from its entry point, through a call: its ops are judged under the mode.
  fs.writeFileSync(path.join(dir, 'beta', 'pkg', 'setup_det.py'), 'import torch\ndef enable():\n    torch.use_deterministic_algorithms(True)\n');
  fs.writeFileSync(path.join(dir, 'beta', 'train.py'), 'from pkg.setup_det import enable\nif __name__ == "__main__":\n    enable()\n');
  return dir;
}

describe('bitexact check on worker threads', () => {
  it('prints byte-identical reports on one thread and on two, in every format', () => {
    const dir = writeProjects();
    for (const format of ['json', 'text', 'sarif']) {
      const one = check(dir, '1', format);
      const two = check(dir, '2', format);
      expect(one.status).toBe(1);
      expect(two.status).toBe(one.status);
      expect(two.stdout).toBe(one.stdout);
      expect(two.stderr).toBe(one.stderr);
    }
    const report = JSON.parse(check(dir, '2').stdout);
    expect(report.filesChecked).toBe(82);
    // The mode reaches beta's files, not alpha's: same op, different severities.
    const severity = (p: string) => report.diagnostics.find((d: { path: string; rule: string }) => d.path === p && d.rule === 'BX101')?.severity;
    expect(severity('alpha/pkg/m1.py')).toBe('warning');
    expect(severity('beta/pkg/m1.py')).not.toBe('warning');
  });
});
