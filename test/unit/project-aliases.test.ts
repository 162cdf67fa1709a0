// A project's own names for torch functions (project-aliases.ts): a module-level
// `resize = F.interpolate`, re-exported by its package, is F.interpolate in the files importing it.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isOffPath } from '../../server/src/analysis/index.js';
import { absoluteName, moduleOfPath } from '../../server/src/analysis/module-names.js';
import { loadChecker, settings } from '../support/checker.js';
import { runCli } from '../support/cli.js';

const WRAPPERS = 'import torch.nn.functional as F\nfrom torch import nn\n\nresize = F.interpolate\nBatchNorm = nn.BatchNorm2d\n';
const INIT = 'from .wrappers import resize, BatchNorm\n';
const HEAD = 'from torch import nn\nfrom kit.ops import resize\n\nclass Head(nn.Module):\n    def forward(self, x):\n        return resize(x, scale_factor=2, mode="bilinear", align_corners=False)\n';

async function headFindings(files: Record<string, string>, select = ['BX123'], file = 'models/head.py'): Promise<string[]> {
  const checker = await loadChecker();
  const s = settings({ select });
  const program = Object.entries(files).map(([file, text]) => {
    const m = moduleOfPath(file);
    return { path: file, text, settings: s, offPath: isOffPath(file), module: m?.module, isPackage: m?.isPackage };
  });
  return checker.checkProgram(program).find((f) => f.path === file)!.findings.map((f) => `${f.range.start.line + 1}:${f.rule} ${f.severity}`);
}

describe("a project's own names for torch functions", () => {
  it('module names and relative imports', () => {
    expect(moduleOfPath('kit/ops/wrappers.py')).toEqual({ module: 'kit.ops.wrappers', isPackage: false });
    expect(moduleOfPath('kit/ops/__init__.py')).toEqual({ module: 'kit.ops', isPackage: true });
    expect(moduleOfPath('../outside.py')).toBeUndefined();
    expect(absoluteName('..ops.resize', 'kit.models.head')).toBe('kit.ops.resize');
    expect(absoluteName('.wrappers.resize', 'kit.ops', true)).toBe('kit.ops.wrappers.resize');
    expect(absoluteName('....x', 'kit.models.head')).toBeUndefined();
  });

  it('an alias re-exported by its package is the torch function where it is imported', async () => {
    const files = { 'kit/ops/wrappers.py': WRAPPERS, 'kit/ops/__init__.py': INIT, 'models/head.py': HEAD };
    expect(await headFindings(files)).toEqual(['6:BX123 warning']);
    // Imported from the defining module itself, or relatively from inside the package.
    expect(await headFindings({ ...files, 'models/head.py': HEAD.replace('kit.ops import', 'kit.ops.wrappers import') })).toEqual(['6:BX123 warning']);
    // Through the package as a module, and from a torch import rather than an assignment.
    const viaModule = 'from torch import nn\nfrom kit import ops\n\nclass Head(nn.Module):\n    def forward(self, x):\n        return ops.resize(x, scale_factor=2, mode="bicubic")\n';
    expect(await headFindings({ ...files, 'models/head.py': viaModule })).toEqual(['6:BX123 warning']);
    const imported = 'from torch.nn.functional import interpolate as resize\n';
    expect(await headFindings({ 'kit/ops/wrappers.py': imported, 'kit/ops/__init__.py': 'from .wrappers import (\n    resize,\n)\n', 'models/head.py': HEAD })).toEqual(['6:BX123 warning']);
  });

  it('a project function of the same name, or an alias to something else, is not', async () => {
    const own = 'def resize(x, **kw):\n    return x\n';
    expect(await headFindings({ 'kit/ops/wrappers.py': own, 'kit/ops/__init__.py': INIT, 'models/head.py': HEAD })).toEqual([]);
    const other = 'import numpy as np\nresize = np.resize\n';
    expect(await headFindings({ 'kit/ops/wrappers.py': other, 'kit/ops/__init__.py': INIT, 'models/head.py': HEAD })).toEqual([]);
    // Not re-exported by the package: `kit.ops.resize` names nothing.
    expect(await headFindings({ 'kit/ops/wrappers.py': WRAPPERS, 'kit/ops/__init__.py': '', 'models/head.py': HEAD })).toEqual([]);
  });

  it("a kernel language imported once and re-exported is that language where it is imported", async () => {
    // The compatibility module binds the real modules in `try:` and stubs in the handler.
    const compat = 'try:\n    import triton\n    import triton.language as tl\nexcept ImportError:\n    triton = None\n    tl = object()\n';
    const kernel = 'from kit._triton import tl, triton\n\n@triton.jit\ndef scatter_kernel(out_ptr, x_ptr, idx_ptr, BLOCK: tl.constexpr):\n    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    x = tl.load(x_ptr + offs).to(tl.float32)\n    idx = tl.load(idx_ptr + offs)\n    tl.atomic_add(out_ptr + idx, x)\n';
    const files = { 'kit/_triton.py': compat, 'kit/__init__.py': '', 'kit/ops/scatter.py': kernel };
    expect(await headFindings(files, ['BX401'], 'kit/ops/scatter.py')).toEqual(['8:BX401 warning']);
    // Relatively, and through a package that re-exports it.
    const relative = kernel.replace('from kit._triton import', 'from .._triton import');
    expect(await headFindings({ ...files, 'kit/ops/scatter.py': relative }, ['BX401'], 'kit/ops/scatter.py')).toEqual(['8:BX401 warning']);
    const viaPackage = kernel.replace('from kit._triton import', 'from kit import');
    expect(await headFindings({ ...files, 'kit/__init__.py': 'from ._triton import tl, triton\n', 'kit/ops/scatter.py': viaPackage }, ['BX401'], 'kit/ops/scatter.py')).toEqual(['8:BX401 warning']);
    // A project module whose `tl` is something else is not Triton.
    const other = 'class _Lang:\n    pass\n\ntl = _Lang()\ntriton = _Lang()\n';
    expect(await headFindings({ ...files, 'kit/_triton.py': other }, ['BX401'], 'kit/ops/scatter.py')).toEqual([]);
  });

  it("a library's own re-export of its function keeps the public name rules know it by", async () => {
    // Inside a package whose name starts like torch's, `from .scatter import scatter_sum` is the
    // project's function, not a torch alias: `torch_scatter.scatter_sum` stays what BX139 matches.
    const files = {
      'torch_scatter/__init__.py': 'from .scatter import scatter_sum\n',
      'torch_scatter/scatter.py': 'def scatter_sum(src, index, dim=-1):\n    return src.new_zeros(src.shape).scatter_add_(dim, index, src)\n',
      'torch_scatter/composite.py': 'import torch\nfrom torch_scatter import scatter_sum\n\n\ndef pooled(x, index):\n    return scatter_sum(x.float(), index, 0)\n',
    };
    expect(await headFindings(files, ['BX139'], 'torch_scatter/composite.py')).toEqual(['6:BX139 warning']);
  });

  it('bitexact check reads them across sub-projects', () => {
    const project = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-aliases-'));
    fs.mkdirSync(path.join(project, 'kit/ops'), { recursive: true });
    fs.mkdirSync(path.join(project, 'plugins/seg/seg'), { recursive: true });
    fs.writeFileSync(path.join(project, 'pyproject.toml'), '[project]\nname = "kit"\n');
    fs.writeFileSync(path.join(project, 'kit/ops/wrappers.py'), WRAPPERS);
    fs.writeFileSync(path.join(project, 'kit/ops/__init__.py'), INIT);
    // A plugin with its own project root still imports the parent's package.
    fs.writeFileSync(path.join(project, 'plugins/seg/pyproject.toml'), '[project]\nname = "seg"\n');
    fs.writeFileSync(path.join(project, 'plugins/seg/seg/head.py'), HEAD);
    const r = runCli(['check', '.', '--select', 'BX123', '--format', 'json'], project);
    const found = JSON.parse(r.stdout).diagnostics.map((d: { path: string; rule: string }) => `${d.path}:${d.rule}`);
    expect(found).toEqual(['plugins/seg/seg/head.py:BX123']);
  });
});
