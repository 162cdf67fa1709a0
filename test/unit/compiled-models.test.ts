// A program that compiles its whole model (compiled-models.ts): which compile calls count, and the
// embedding hazard (BX140) it turns on in another file of the program.
import { describe, expect, it } from 'vitest';
import { ALL_NAMES, namesCompiled } from '../../server/src/analysis/compiled-program.js';
import { loadChecker, settings } from '../support/checker.js';

const MODEL = ['import torch.nn as nn', 'class LM(nn.Module):', '    def __init__(self):', '        super().__init__()', '        self.wte = nn.Embedding(100, 8)', '    def forward(self, ids):', '        return self.wte(ids)', ''].join('\n');
const train = (compile: string) => ['import torch', 'from pkg.model import LM', 'torch.manual_seed(0)', 'model = LM()', compile, 'model(torch.zeros(2, dtype=torch.long)).sum().backward()', ''].join('\n');

describe('compiled models', () => {
  it('count a whole model compiled on the default path, not a block, a function, an option or a regex', async () => {
    const checker = await loadChecker();
    const compiles = (text: string) => checker.compilesWholeModel(text);
    expect(compiles('model = torch.compile(model, dynamic=False)')).toBe(true);
    expect(compiles('class T:\n    def setup(self):\n        self.model = torch.compile(self.model)')).toBe(true);
    expect(compiles('unwrapped_model.compile()')).toBe(true);
    expect(compiles('if __name__ == "__main__":\n    net = torch.compile(net)')).toBe(true);
    // A flag the file turns on by default: the default run compiles.
    expect(compiles('compile = True\nif compile:\n    model = torch.compile(model)')).toBe(true);
    expect(compiles('p.add_argument("--torch-compile", type=bool, default=True)\nif args.torch_compile:\n    model = torch.compile(model)')).toBe(true);
    expect(compiles('@dataclass\nclass Cfg:\n    compile: bool = True\nif cfg.compile:\n    model = torch.compile(model)')).toBe(true);
    // Options and other paths.
    expect(compiles('p.add_argument("--compile", action="store_true")\nif args.compile:\n    model = torch.compile(model)')).toBe(false);
    expect(compiles('compile = True\nif compile:\n    pass\nelse:\n    model = torch.compile(model)')).toBe(false);
    expect(compiles('for i, block in enumerate(blocks):\n    blocks[i] = torch.compile(block)')).toBe(false);
    expect(compiles('try:\n    run()\nexcept Exception:\n    model = torch.compile(model)')).toBe(false);
    expect(compiles('fast = torch.compile(step_fn)\nwords = re.compile(r"\\w+")')).toBe(false);
  });

  it('report an embedding of a model file when the training script compiles that model, as the program shows it', async () => {
    const checker = await loadChecker();
    const s = settings({ select: ['BX140'] });
    const severities = (compile: string, trainPath = 'train.py', trainText = train(compile)) =>
      checker
        .checkProgram([
          { path: 'pkg/model.py', module: 'pkg.model', text: MODEL, settings: s, offPath: false },
          { path: 'pkg/__init__.py', module: 'pkg', isPackage: true, text: 'from .model import LM\n', settings: s, offPath: false },
          { path: trainPath, module: trainPath.replace(/\.py$/, '').replace(/\//g, '.'), text: trainText, settings: s, offPath: trainPath.startsWith('tests/') },
        ])[0]!
        .findings.map((f) => `${f.rule} ${f.severity} ${f.range.start.line + 1}`);
    expect(severities('model = torch.compile(model)')).toEqual(['BX140 warning 5']);
    // Through the package's __init__ (`from pkg import LM`), and not from a script that builds another model.
    expect(severities('', 'train.py', train('model = torch.compile(model)').replace('from pkg.model import LM', 'from pkg import LM'))).toEqual(['BX140 warning 5']);
    expect(severities('', 'train.py', train('model = torch.compile(model)').replace('from pkg.model import LM', 'from other_models import LM'))).toEqual([]);
    // Compiled block by block, not at all, or only by a test: the embedding runs eager.
    expect(severities('model.blocks = [torch.compile(b) for b in model.blocks]')).toEqual([]);
    expect(severities('pass')).toEqual([]);
    expect(severities('model = torch.compile(model)', 'tests/test_compile.py')).toEqual([]);
    // Deterministic mode on where the program runs: Inductor's embedding backward is stable.
    expect(severities('model = torch.compile(model)\ntorch.use_deterministic_algorithms(True)')).toEqual([]);
  });
});

describe('names a compile builds', () => {
  const file = (module: string, text: string, isPackage = false) => ({ path: `${module}.py`, module, isPackage, text, settings: settings(), offPath: false });
  it('follows the names a compiling script imports, through relative re-exports, and nothing else', () => {
    const files = [
      file('train', 'from pkg import LM\nfrom pkg.config import (\n    Cfg,\n    Other as O,\n)\nimport pkg.unrelated'),
      file('pkg', 'from .model import LM\nfrom .vision import ViT', true),
      file('pkg.model', 'class LM: ...'),
      file('pkg.vision', 'class ViT: ...'),
      file('pkg.config', 'class Cfg: ...'),
      file('pkg.unrelated', 'class U: ...'),
    ];
    const names = namesCompiled(files, [true, false, false, false, false, false]).map((n) => (n ? [...n].sort() : undefined));
    expect(names).toEqual([[ALL_NAMES], ['LM'], ['LM'], undefined, ['Cfg', 'Other'], undefined]);
    // A `src/` layout is imported without its `src.`; an import above the project resolves nothing.
    const src = [file('src.lib.net', 'class Net: ...'), file('run', 'from lib.net import Net\nfrom ... import far')];
    expect(namesCompiled(src, [false, true]).map((n) => (n ? [...n] : undefined))).toEqual([['Net'], [ALL_NAMES]]);
  });
});
