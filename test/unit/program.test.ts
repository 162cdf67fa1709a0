// Program facts by reachability (server/src/analysis/program.ts): the deterministic mode counts as
// on only where the program's default path runs an unconditional switch, and test, benchmark and
// build files are reported at most as info.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isOffPath } from '../../server/src/analysis/index.js';
import { loadChecker, settings } from '../support/checker.js';
import { runCli } from '../support/cli.js';

const MODEL = 'import torch\ndef combine(x, i, s):\n    return x.scatter_add_(0, i, s)\n';

async function severitiesInModel(files: Record<string, string>): Promise<string[]> {
  const checker = await loadChecker();
  const s = settings({ select: ['BX102'] });
  const program = Object.entries({ 'model.py': MODEL, ...files }).map(([file, text]) => ({ path: file, text, settings: s, offPath: isOffPath(file) }));
  return checker.checkProgram(program).find((f) => f.path === 'model.py')!.findings.map((f) => f.severity);
}

describe('the mode by reachability', () => {
  it('a module-level switch in the training script turns the mode on for the other files', async () => {
    expect(await severitiesInModel({ 'train.py': 'import torch\ntorch.use_deterministic_algorithms(True)\n' })).toEqual([]);
  });

  it('a switch in a test helper does not', async () => {
    expect(await severitiesInModel({ 'tests/helpers.py': 'import torch\ntorch.use_deterministic_algorithms(True)\n' })).toEqual(['warning']);
    expect(await severitiesInModel({ 'test_model.py': 'import torch\ntorch.use_deterministic_algorithms(True)\n' })).toEqual(['warning']);
  });

  it('a switch behind a user flag leaves the default path reported', async () => {
    const train = 'import torch\nimport argparse\nargs = argparse.ArgumentParser().parse_args()\nif args.deterministic:\n    torch.use_deterministic_algorithms(True)\n';
    expect(await severitiesInModel({ 'train.py': train })).toEqual(['warning']);
    expect(await severitiesInModel({ 'train.py': 'import torch\ndef main(args):\n    torch.use_deterministic_algorithms(args.det)\nmain(None)\n' })).toEqual(['warning']);
  });

  it('a switch in a helper counts when the entry point calls it unconditionally, in any file', async () => {
    const utils = 'import torch\ndef enable_determinism():\n    torch.use_deterministic_algorithms(True)\n';
    const called = 'from utils import enable_determinism\ndef main():\n    enable_determinism()\nif __name__ == "__main__":\n    main()\n';
    expect(await severitiesInModel({ 'utils.py': utils, 'train.py': called })).toEqual([]);
    // Never called, or called only under a flag (as Megatron-LM's --deterministic-mode): mode off.
    expect(await severitiesInModel({ 'utils.py': utils })).toEqual(['warning']);
    const flagged = 'from utils import enable_determinism\ndef parse(args):\n    if args.deterministic_mode:\n        enable_determinism()\nif __name__ == "__main__":\n    parse(None)\n';
    expect(await severitiesInModel({ 'utils.py': utils, 'train.py': flagged })).toEqual(['warning']);
  });

  it('a wrapper that switches the mode on around one call and restores it is not the program mode', async () => {
    const ops = 'import torch\ndef exact_sum(x, i, s):\n    prev = torch.are_deterministic_algorithms_enabled()\n    torch.use_deterministic_algorithms(True)\n    try:\n        return x.index_add(0, i, s)\n    finally:\n        torch.use_deterministic_algorithms(prev)\nexact_sum(None, None, None)\n';
    expect(await severitiesInModel({ 'ops.py': ops })).toEqual(['warning']);
  });

  it('a switch in a script that trains nothing (a converter) sets the mode of its own run, not of the others', async () => {
    const convert = 'import torch\ntorch.use_deterministic_algorithms(True)\ndef main():\n    model = Net.from_pretrained("x")\n    model.save_pretrained("y")\nif __name__ == "__main__":\n    main()\n';
    expect(await severitiesInModel({ 'scripts/convert_net.py': convert })).toEqual(['warning']);
    // Its own scatter runs under the mode it turned on.
    const checker = await loadChecker();
    const s = settings({ select: ['BX102'] });
    const own = convert + 'def fold(x, i, v):\n    return x.scatter_add_(0, i, v)\n';
    const program = [{ path: 'model.py', text: MODEL, settings: s, offPath: false }, { path: 'convert.py', text: own, settings: s, offPath: false }];
    expect(checker.checkProgram(program).find((f) => f.path === 'convert.py')!.findings.map((f) => f.severity)).toEqual([]);
    // A script that trains, or launches a training function of another file, keeps it program-wide.
    expect(await severitiesInModel({ 'run.py': 'import torch\nfrom trainer import train\ntorch.use_deterministic_algorithms(True)\nif __name__ == "__main__":\n    train()\n' })).toEqual([]);
    expect(await severitiesInModel({ 'run.py': 'import torch\ntorch.use_deterministic_algorithms(True)\nif __name__ == "__main__":\n    loss = step()\n    loss.backward()\n' })).toEqual([]);
  });

  it('the call chain may pass through methods and loops stop it', async () => {
    const utils = 'import torch\nclass Setup:\n    def apply(self):\n        torch.use_deterministic_algorithms(True)\n';
    expect(await severitiesInModel({ 'utils.py': utils, 'train.py': 'from utils import Setup\nSetup().apply()\n' })).toEqual([]);
    expect(await severitiesInModel({ 'utils.py': utils, 'train.py': 'from utils import Setup\nfor s in [Setup()]:\n    s.apply()\n' })).toEqual(['warning']);
  });
});

describe('a program that trains (program.ts programTrains)', () => {
  const MODEL_FILE = 'from transformers import AutoModelForCausalLM\nclass Policy:\n    def __init__(self, name):\n        self.model = AutoModelForCausalLM.from_pretrained(name, attn_implementation="flash_attention_2")\n';
  async function policySeverities(files: Record<string, string>): Promise<string[]> {
    const checker = await loadChecker();
    const s = settings({ select: ['BX502'] });
    const program = Object.entries({ 'policy.py': MODEL_FILE, ...files }).map(([file, text]) => ({ path: file, text, settings: s, offPath: isOffPath(file) }));
    return checker.checkProgram(program).find((f) => f.path === 'policy.py')!.findings.map((f) => `${f.severity}${f.detail?.includes('Another file of this program trains') ? ' (program trains)' : ''}`);
  }

  it('raises a backward-only hit in a model file to a warning when another file trains', async () => {
    const trainer = 'import torch\nfrom policy import Policy\npolicy = Policy("m")\nloss = policy.model(x).loss\nloss.backward()\n';
    expect(await policySeverities({ 'train.py': trainer })).toEqual(['warning (program trains)']);
  });

  it('leaves it information when nothing trains, or only a test does', async () => {
    expect(await policySeverities({ 'serve.py': 'from policy import Policy\nprint(Policy("m").model.generate())\n' })).toEqual(['info']);
    expect(await policySeverities({ 'tests/test_policy.py': 'from policy import Policy\nPolicy("m").model(x).loss.backward()\n' })).toEqual(['info']);
  });

  it('leaves it information in a file that only serves the model (it generates and trains nothing)', async () => {
    const served = MODEL_FILE + 'def answer(p, ids):\n    return p.model.generate(ids)\n';
    const trainer = 'import torch\nfrom policy import Policy\nPolicy("m").model(x).loss.backward()\n';
    expect(await policySeverities({ 'policy.py': served, 'train.py': trainer })).toEqual(['info']);
  });
});

describe('a program that seeds nothing (program.ts programUnseeded)', () => {
  const ENTRY = 'from trainers import PairTrainer\nfrom torch.utils.data import DataLoader\ndef main(ds):\n    loader = DataLoader(ds, batch_size=8, shuffle=True)\n    trainer = PairTrainer(loader)\n    trainer.fit()\nif __name__ == "__main__":\n    main(None)\n';
  const TRAINER = 'class PairTrainer:\n    def __init__(self, loader):\n        self.loader = loader\n    def fit(self):\n        for x in self.loader:\n            self.model(x).sum().backward()\n            self.optimizer.step()\n';
  async function entryFindings(files: Record<string, string>): Promise<string[]> {
    const checker = await loadChecker();
    const s = settings({ select: ['BX301', 'BX304'] });
    const program = Object.entries({ 'train.py': ENTRY, ...files }).map(([file, text]) => ({ path: file, text, settings: s, offPath: isOffPath(file) }));
    return checker.checkProgram(program).find((f) => f.path === 'train.py')!.findings.map((f) => `${f.rule} ${f.severity}`);
  }

  it('reports an entry point running a trainer class of another file, and a shuffling loader, when no file seeds torch', async () => {
    expect(await entryFindings({ 'trainers.py': TRAINER })).toEqual(['BX304 warning', 'BX301 warning']);
  });

  it('says nothing of the entry point, and leaves the loader information, when another file seeds', async () => {
    const seeded = TRAINER.replace('self.loader = loader', 'self.loader = loader\n        set_seed(0)');
    expect(await entryFindings({ 'trainers.py': seeded })).toEqual(['BX304 info']);
    // A seed in a test file seeds nothing of the training program.
    expect(await entryFindings({ 'trainers.py': TRAINER, 'tests/test_trainer.py': 'import torch\ntorch.manual_seed(0)\n' })).toEqual(['BX304 warning', 'BX301 warning']);
  });
});

describe('an entry point seeded by a helper of another file (seeding-functions.ts)', () => {
  // The script trains itself; its seeding, if any, is in the setup helper it imports.
  const SCRIPT = [
    'import torch',
    'from project.config import prepare',
    'def fit(model, opt, batches):',
    '    for x in batches:',
    '        model(x).sum().backward()',
    '        opt.step()',
    'if __name__ == "__main__":',
    '    cfg = prepare(None)',
    '    fit(None, None, [])',
    '',
  ].join('\n');
  const config = (body: string) => `import random\nfrom project import rng_utils\ndef _log(cfg):\n    print(cfg)\ndef _init(cfg):\n${body}\ndef prepare(cfg):\n    _log(cfg)\n    _init(cfg)\n    return cfg\n`;
  async function scriptFindings(files: Record<string, string>): Promise<string[]> {
    const checker = await loadChecker();
    const s = settings({ select: ['BX301'] });
    const program = Object.entries({ 'train.py': SCRIPT, ...files }).map(([file, text]) => ({ path: file, text, settings: s, offPath: isOffPath(file) }));
    return checker.checkProgram(program).find((f) => f.path === 'train.py')!.findings.map((f) => `${f.rule} ${f.severity}`);
  }

  it('is not reported when the helper seeds torch through a function of its own file and an imported seed helper', async () => {
    expect(await scriptFindings({ 'project/config.py': config('    rng_utils.fix_all_seeds(cfg.seed)') })).toEqual([]);
    expect(await scriptFindings({ 'project/config.py': config('    import torch\n    torch.manual_seed(0)') })).toEqual([]);
    // Through a function another module defines, called by its imported name in the helper's file.
    const relay = config('    reseed(cfg)').replace('from project import rng_utils', 'from project.rng_utils import reset as reseed');
    expect(await scriptFindings({ 'project/config.py': relay, 'project/rng_utils.py': 'import torch\ndef reset(cfg):\n    torch.manual_seed(cfg.seed)\n' })).toEqual([]);
    expect(await scriptFindings({ 'project/config.py': relay, 'project/rng_utils.py': 'import numpy as np\ndef reset(cfg):\n    np.random.seed(cfg.seed)\n' })).toEqual(['BX301 warning']);
  });

  it('is reported when the helper seeds only another generator, only CUDA, only when a seed is given, or is defined in test code alone', async () => {
    expect(await scriptFindings({ 'project/config.py': config('    random.seed(0)') })).toEqual(['BX301 warning']);
    expect(await scriptFindings({ 'project/config.py': config('    import torch\n    torch.cuda.manual_seed_all(0)') })).toEqual(['BX301 warning']);
    expect(await scriptFindings({ 'project/config.py': config('    if cfg.seed is not None:\n        rng_utils.fix_all_seeds(cfg.seed)') })).toEqual(['BX301 warning']);
    expect(await scriptFindings({ 'project/config.py': config('    rng_utils.fix_all_seeds(None if cfg.seed < 0 else cfg.seed)') })).toEqual(['BX301 warning']);
    expect(await scriptFindings({ 'project/config.py': config('    pass'), 'tests/helpers.py': 'def prepare(cfg):\n    set_seed(0)\n' })).toEqual(['BX301 warning']);
  });
});

describe('test, benchmark and build code', () => {
  it('is recognised by its path from the project root', () => {
    for (const file of ['tests/test_ops.py', 'test/x.py', 'pkg/tests/x.py', 'ops_test.py', 'conftest.py', 'benchmarks/bench_attn.py', 'bench/x.py', 'docs/conf.py', 'setup.py', 'build/lib/x.py', 'testing/util.py', 'src/pkg/ops/backends/_ascend/ops/mhc.py', 'scripts/conversion/numerical_tests_llama.py', 'benchmark.py', 'kernels/bench_attn.py', 'tools/attn-benchmark.py', 'validate.py', 'inference.py', 'pkg/exporter/tsdf_utils.py', 'pkg/core/export/trtllm.py']) {
      expect(isOffPath(file), file).toBe(true);
    }
    for (const file of ['train.py', 'src/latest/model.py', 'attest.py', 'contest/x.py', 'examples/train.py', 'workbench.py', 'pkg/inference.py', 'pkg/engine/validate.py', 'train_eval.py', 'pkg/export_utils.py']) expect(isOffPath(file), file).toBe(false);
    expect(isOffPath('scripts/profile_run.py', ['scripts/**'])).toBe(true);
    // A setup.py beside an __init__.py is a module of its package, not a build script.
    expect(isOffPath('pkg/eval/setup.py', [], true)).toBe(false);
  });

  it('a package module named setup.py marks no project root: its program is the package\'s, and it is on the path', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-program-'));
    fs.mkdirSync(path.join(dir, 'pkg/eval'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'pyproject.toml'), '');
    for (const init of ['pkg/__init__.py', 'pkg/eval/__init__.py']) fs.writeFileSync(path.join(dir, init), '');
    fs.writeFileSync(path.join(dir, 'pkg/eval/setup.py'), 'import torch\ndef prepare():\n    torch.backends.cudnn.benchmark = True\n');
    fs.writeFileSync(path.join(dir, 'setup.py'), 'import torch\ntorch.backends.cudnn.benchmark = True\n');
    const r = runCli(['check', '.', '--format', 'json', '--select', 'BX201'], dir);
    const found = JSON.parse(r.stdout).diagnostics.map((d: { path: string; severity: string }) => `${d.path} ${d.severity}`).sort();
    // The root's build script stays off the path.
    expect(found).toEqual(['pkg/eval/setup.py warning', 'setup.py info']);
  });

  it('`bitexact check` reports it as info by default, in full with test-code = "report", not at all with "skip"; .pyi stubs are not walked', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bitexact-program-'));
    fs.mkdirSync(path.join(dir, 'tests'));
    fs.writeFileSync(path.join(dir, 'tests/test_model.py'), MODEL);
    fs.writeFileSync(path.join(dir, 'model.py'), MODEL);
    fs.writeFileSync(path.join(dir, 'model.pyi'), 'import torch\ndef combine(x, i, s): return x.scatter_add_(0, i, s)\n');
    const severities = async (policy?: string) => {
      fs.writeFileSync(path.join(dir, 'pyproject.toml'), policy ? `[tool.bitexact]\ntest-code = "${policy}"\n` : '');
      const r = runCli(['check', '.', '--format', 'json', '--select', 'BX102'], dir);
      const report = JSON.parse(r.stdout);
      return { files: report.filesChecked, found: report.diagnostics.map((d: { path: string; severity: string }) => `${d.path} ${d.severity}`) };
    };
    expect(await severities()).toEqual({ files: 2, found: ['model.py warning', 'tests/test_model.py info'] });
    expect(await severities('report')).toEqual({ files: 2, found: ['model.py warning', 'tests/test_model.py warning'] });
    expect(await severities('skip')).toEqual({ files: 2, found: ['model.py warning'] });
    fs.writeFileSync(path.join(dir, 'pyproject.toml'), '[tool.bitexact]\ntest-code = "sometimes"\n');
    const bad = runCli(['check', '.'], dir);
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain('test-code');
  });
});

describe('functions every call of which runs without gradients (no-grad-callers.ts)', () => {
  const LAYERS = 'import torch.nn.functional as F\ndef resize_table(t, size):\n    return F.interpolate(t, size=size, mode="bicubic")\n';

  async function severitiesInLayers(files: Record<string, string>): Promise<string[]> {
    const checker = await loadChecker();
    const s = settings({ select: ['BX123'] });
    const program = Object.entries({ 'layers.py': LAYERS, ...files }).map(([file, text]) => ({ path: file, text, settings: s, offPath: isOffPath(file) }));
    return checker.checkProgram(program).find((f) => f.path === 'layers.py')!.findings.map((f) => f.severity);
  }

  it('are silent for backward-only rules when every call is in a checkpoint loader, across files', async () => {
    const loader = 'from layers import resize_table\ndef checkpoint_filter_fn(sd, model):\n    sd["pos"] = resize_table(sd["pos"], (24, 24))\n    return sd\n';
    expect(await severitiesInLayers({ 'loader.py': loader })).toEqual([]);
  });

  it('keep their backward when one call is in a forward, or the name is passed on or renamed', async () => {
    const loader = 'from layers import resize_table\ndef checkpoint_filter_fn(sd, model):\n    sd["pos"] = resize_table(sd["pos"], (24, 24))\n    return sd\n';
    const model = 'from layers import resize_table\nclass M:\n    def forward(self, x):\n        return resize_table(x, (8, 8))\n';
    expect(await severitiesInLayers({ 'loader.py': loader, 'model.py': model })).toEqual(['warning']);
    expect(await severitiesInLayers({ 'loader.py': loader, 'model.py': 'from layers import resize_table\nHOOKS = [resize_table]\n' })).toEqual(['warning']);
    expect(await severitiesInLayers({ 'loader.py': loader, 'model.py': 'from layers import resize_table as rt\ndef f(x):\n    return rt(x, 2)\n' })).toEqual(['warning']);
    // A file that starts with blank lines: its module node starts after them, and the uses are still found.
    expect(await severitiesInLayers({ 'loader.py': loader, 'model.py': `\n\n${model}` })).toEqual(['warning']);
  });

  it('climb through callers: a helper called only by a function that a checkpoint loader calls', async () => {
    const helper = 'from layers import resize_table\ndef adapt(sd):\n    return resize_table(sd, (24, 24))\n';
    const loader = 'from helper import adapt\ndef checkpoint_filter_fn(sd, model):\n    return adapt(sd)\n';
    expect(await severitiesInLayers({ 'helper.py': helper, 'loader.py': loader })).toEqual([]);
    const trained = 'from helper import adapt\nclass M:\n    def forward(self, x):\n        return adapt(x)\n';
    expect(await severitiesInLayers({ 'helper.py': helper, 'model.py': trained })).toEqual(['warning']);
  });

  it('follow a module-level instance by its name: silent when it is called only under no_grad', async () => {
    const checker = await loadChecker();
    const s = settings({ select: ['BX125'] });
    const pooled = (caller: string) =>
      ['import torch', 'halve = torch.nn.AvgPool3d(3, stride=2)', 'def pyramid(grid):', '    return [grid, halve(grid[None])[0]]', caller, ''].join('\n');
    const severities = (text: string) => checker.checkProgram([{ path: 'mesh.py', text, settings: s, offPath: false }])[0]!.findings.map((f) => f.severity);
    expect(severities(pooled('@torch.no_grad()\ndef export_mesh(grid):\n    return pyramid(grid)\nexport_mesh(torch.zeros(1, 8, 8, 8))'))).toEqual([]);
    // Called where gradients are on, or computed at import time: its backward may run.
    expect(severities(pooled('def loss(grid):\n    return pyramid(grid)[1].sum()\nloss(torch.zeros(1, 8, 8, 8))'))).toEqual(['warning']);
    expect(severities('import torch\nx = torch.zeros(1, 1, 4, 4, 4, requires_grad=True)\nsmall = torch.nn.AvgPool3d(3, 1)(x)\n')).toEqual(['warning']);
  });

  it('cap at info what only test functions reach, through classes and subclasses', async () => {
    const checker = await loadChecker();
    const s = settings({ select: ['BX123'] });
    const toy = [
      'import torch.nn as nn',
      'import torch.nn.functional as F',
      'class Up(nn.Module):',
      '    def forward(self, x):',
      '        return F.interpolate(x, scale_factor=2, mode="bilinear")',
      'class Bigger(Up):',
      '    pass',
      'class Toy(nn.Module):',
      '    def __init__(self):',
      '        super().__init__()',
      '        self.up = Bigger()',
      '    def forward(self, x):',
      '        return self.up(x)',
    ].join('\n');
    const severities = (caller: string) => checker.checkProgram([{ path: 'probe.py', text: `${toy}\n${caller}\n`, settings: s, offPath: false }])[0]!.findings.map((f) => f.severity);
    expect(severities('def test_toy():\n    Toy()(torch.randn(1, 1, 4, 4)).sum().backward()')).toEqual(['info']);
    // A training function builds it too: the warning stays.
    expect(severities('def test_toy():\n    Toy()\ndef train():\n    Toy()(torch.randn(1, 1, 4, 4)).sum().backward()')).toEqual(['warning']);
    // Unless the user asks for test code reported.
    const reported = settings({ select: ['BX123'], testCode: 'report' });
    const asked = checker.checkProgram([{ path: 'probe.py', text: `${toy}\ndef test_toy():\n    Toy()\n`, settings: reported, offPath: false }]);
    expect(asked[0]!.findings.map((f) => f.severity)).toEqual(['warning']);
  });

  it('count no call from test code, nor a call of another file\'s function of the same name', async () => {
    const test = 'import torch\nfrom layers import resize_table\ndef test_resize():\n    with torch.no_grad():\n        resize_table(torch.zeros(1, 1, 4, 4), (8, 8))\n';
    expect(await severitiesInLayers({ 'tests/test_layers.py': test })).toEqual(['warning']);
    const other = 'def resize_table(t, size):\n    return t\ndef checkpoint_filter_fn(sd, model):\n    return resize_table(sd, 2)\n';
    expect(await severitiesInLayers({ 'other.py': other })).toEqual(['warning']);
  });
});

describe('kernel switches by their launches (launch-switches.ts)', () => {
  const KERNEL = [
    'import triton',
    'import triton.language as tl',
    '@triton.jit',
    'def partial_norms(x_ptr, out_ptr, n, BLOCK: tl.constexpr, SPLIT_ROWS: tl.constexpr):',
    '    offs = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)',
    '    total = tl.sum(tl.load(x_ptr + offs, mask=offs < n, other=0.0).to(tl.float32), axis=0)',
    '    if SPLIT_ROWS:',
    '        tl.atomic_add(out_ptr + tl.program_id(0), total)',
    '    else:',
    '        tl.store(out_ptr + tl.program_id(0), total)',
    '',
  ].join('\n');
  const launcher = (signature: string, passed: string, backward = '') => [
    'import torch',
    'from kernels import partial_norms',
    'class RowNorms(torch.autograd.Function):',
    '    @staticmethod',
    `    def forward(ctx, x, ${signature}):`,
    `        ctx.split = ${signature.split('=')[0]}`,
    '        out = torch.zeros(x.shape[0], device=x.device)',
    `        partial_norms[(x.shape[0], 4)](x, out, x.numel(), BLOCK=1024, SPLIT_ROWS=${passed})`,
    '        return out',
    backward,
    '',
  ].join('\n');

  async function atomicSeverity(files: Record<string, string>): Promise<string[]> {
    const checker = await loadChecker();
    const s = settings({ select: ['BX401'] });
    const program = Object.entries({ 'kernels.py': KERNEL, ...files }).map(([file, text]) => ({ path: file, text, settings: s, offPath: isOffPath(file) }));
    return checker.checkProgram(program).find((f) => f.path === 'kernels.py')!.findings.map((f) => f.severity);
  }

  it('leave an atomic under a switch information when every launch passes a value off by default', async () => {
    expect(await atomicSeverity({ 'ops.py': launcher('split_rows=False', 'split_rows') })).toEqual(['info']);
    expect(await atomicSeverity({ 'ops.py': launcher('split_rows=False', 'False') })).toEqual(['info']);
    // The backward reads the flag the forward kept on ctx.
    const backward = '    @staticmethod\n    def backward(ctx, g):\n        partial_norms[(4, 4)](g, g, g.numel(), BLOCK=256, SPLIT_ROWS=ctx.split)\n        return g, None';
    expect(await atomicSeverity({ 'ops.py': launcher('split_rows=None', 'split_rows', backward) })).toEqual(['info']);
  });

  it('keep the warning when a launch turns it on, passes what the code cannot read, or no launch is seen', async () => {
    expect(await atomicSeverity({ 'ops.py': launcher('split_rows=True', 'split_rows') })).toEqual(['warning']);
    expect(await atomicSeverity({ 'ops.py': launcher('split_rows=False', 'x.shape[0] > 4096') })).toEqual(['warning']);
    expect(await atomicSeverity({})).toEqual(['warning']);
    // A test that launches it with the switch on does not count, nor for the default path.
    expect(await atomicSeverity({ 'ops.py': launcher('split_rows=False', 'split_rows'), 'tests/test_norms.py': launcher('split_rows=True', 'split_rows') })).toEqual(['info']);
  });
});
