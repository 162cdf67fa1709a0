// python/sitecustomize/sitecustomize.py (used by `pair --preset det`), run by a real python3 against a
// fake `torch` package that records what was called.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/checker.js';

const SITE = path.join(ROOT, 'python/sitecustomize');
let tmp: string;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-site-'));
  fs.mkdirSync(path.join(tmp, 'fake/torch'), { recursive: true });
  fs.writeFileSync(
    path.join(tmp, 'fake/torch/__init__.py'),
    ['calls = []', 'def use_deterministic_algorithms(mode, warn_only=False):', '    calls.append(mode)', 'from . import nn', ''].join('\n'),
  );
  fs.writeFileSync(path.join(tmp, 'fake/torch/nn.py'), 'import torch\nSEEN_CALLS_AT_IMPORT = list(torch.calls)\n');
  fs.mkdirSync(path.join(tmp, 'broken/torch'), { recursive: true });
  fs.writeFileSync(path.join(tmp, 'broken/torch/__init__.py'), 'def use_deterministic_algorithms(mode):\n    raise RuntimeError("no CUDA here")\n');
  fs.mkdirSync(path.join(tmp, 'other'));
  fs.writeFileSync(path.join(tmp, 'other/sitecustomize.py'), 'import os\nos.environ["OTHER_SITECUSTOMIZE_RAN"] = "yes"\n');
});

function python(code: string, pythonPath: string[]): { stdout: string; stderr: string; status: number | null } {
  const env: NodeJS.ProcessEnv = { ...process.env, PYTHONPATH: pythonPath.join(path.delimiter) };
  const r = spawnSync('python3', ['-c', code], { env, encoding: 'utf8' });
  return { stdout: r.stdout.trim(), stderr: r.stderr, status: r.status };
}

describe('sitecustomize for --preset det', () => {
  it('turns on deterministic algorithms once, right after torch is imported', () => {
    const r = python('import torch.nn, torch\nimport torch\nprint(torch.calls, torch.nn.SEEN_CALLS_AT_IMPORT, type(torch.__loader__).__name__)', [SITE, path.join(tmp, 'fake')]);
    expect(r.stderr).toBe('');
    // torch/__init__ ran to the end (its `from . import nn` included) before the call.
    expect(r.stdout).toBe('[True] [] SourceFileLoader');
  });

  it('costs nothing to a program that never imports torch', () => {
    const r = python('import sys\nprint("torch" in sys.modules, sum(1 for f in sys.meta_path if type(f).__name__ == "_TorchImportHook"))', [SITE, path.join(tmp, 'fake')]);
    expect(r).toMatchObject({ status: 0, stdout: 'False 1', stderr: '' });
  });

  it('runs the sitecustomize it hides', () => {
    const r = python('import os\nprint(os.environ.get("OTHER_SITECUSTOMIZE_RAN"))', [SITE, path.join(tmp, 'other')]);
    expect(r.stdout).toBe('yes');
  });

  it('warns and carries on when the call fails', () => {
    const r = python('import torch\nprint("still running")', [SITE, path.join(tmp, 'broken')]);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe('still running');
    expect(r.stderr).toMatch(/use_deterministic_algorithms\(True\) failed: RuntimeError\('no CUDA here'\)/);
  });

  const torchInstalled = spawnSync('python3', ['-c', 'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("torch") else 1)']).status === 0;
  it.skipIf(torchInstalled)('leaves a missing torch a normal ImportError', () => {
    const r = python('try:\n    import torch\nexcept ImportError as e:\n    print(type(e).__name__)', [SITE]);
    expect(r.stdout).toMatch(/ModuleNotFoundError|ImportError/);
  });
});
