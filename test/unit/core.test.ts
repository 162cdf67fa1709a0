// Core facts the rules stand on: import resolution, guards, dtype hints, the program's mode.
import { describe, expect, it } from 'vitest';
import { check } from '../support/checker.js';

const rules = async (text: string, overrides = {}) => (await check(text, overrides)).map((f) => `${f.range.start.line + 1}:${f.rule}:${f.severity}:${f.guard}`);

describe('import and alias resolution', () => {
  it.each([
    ['import torch as th', 'th.scatter_add(a, 0, i, s)'],
    ['import torch', 'torch.Tensor.scatter_add_(a, 0, i, s)'],
    ['from torch import scatter_add', 'scatter_add(a, 0, i, s)'],
    ['from torch import scatter_add as sa', 'sa(a, 0, i, s)'],
    ['import torch\nsa = torch.scatter_add', 'sa(a, 0, i, s)'],
    ['from torch import Tensor', 'Tensor.scatter_add_(a, 0, i, s)'],
    ['', 'a.scatter_add_(0, i, s)'],
    ['', 'self.buf.scatter_add_(0, i, s)'],
    ['', 'torch_zeros().scatter_add_(0, i, s)'],
  ])('%s / %s resolves to scatter_add', async (imports, call) => {
    expect(await rules(`${imports}\n${call}\n`)).toHaveLength(1);
  });

  it('resolves module classes through torch.nn.modules re-exports', async () => {
    const { ImportScope } = await import('../../server/src/analysis/scope.js');
    const { loadChecker } = await import('../support/checker.js');
    const c = await loadChecker();
    const tree = c.parser.parse('import torch.nn.modules.pooling as P\nfrom torch.nn import functional as Fn\nP.AvgPool3d\nFn.interpolate\n');
    const scope = new ImportScope();
    for (const n of tree.rootNode.namedChildren.slice(0, 2)) scope.addImport(n);
    const [a, b] = tree.rootNode.namedChildren.slice(2).map((s) => scope.resolveExpression(s.namedChildren[0]!));
    expect([a, b]).toEqual(['torch.nn.AvgPool3d', 'torch.nn.functional.interpolate']);
    tree.delete();
  });

  it('reads a name bound to one of two library functions as either, and a name rebound elsewhere as neither', async () => {
    const { ImportScope } = await import('../../server/src/analysis/scope.js');
    const { aliasAssignmentOf } = await import('../../server/src/analysis/binding-statements.js');
    const { loadChecker } = await import('../support/checker.js');
    const c = await loadChecker();
    const tree = c.parser.parse('import torch\nf = torch.index_add if a else torch.scatter_add\ng = torch.sum if a else torch.sum\nh = torch.sum if a else mine\nf\ng\nh\n');
    const scope = new ImportScope();
    const [imp, ...rest] = tree.rootNode.namedChildren;
    scope.addImport(imp!);
    for (const statement of rest.slice(0, 3)) {
      const assignment = statement.namedChildren[0]!;
      scope.addAlias(aliasAssignmentOf(assignment.childForFieldName('left')!, assignment.childForFieldName('right'))!);
    }
    const names = rest.slice(3).map((s) => s.namedChildren[0]!);
    expect(names.map((n) => scope.resolveExpression(n))).toEqual(['torch.index_add', 'torch.sum', undefined]);
    expect(names.map((n) => scope.alternativesOf(n))).toEqual([['torch.scatter_add'], [], []]);
    scope.addAlias(['f', undefined]);
    expect(scope.alternativesOf(names[0]!)).toEqual([]);
    tree.delete();
  });

  it('does not take non-tensor modules or shadowed names for torch', async () => {
    expect(await rules('import numpy as np\nnp.scatter_add_(a, 0, i, s)\n')).toEqual([]);
    expect(await rules('import torch\nimport mylib as torch\ntorch.scatter_add(a, 0, i, s)\n')).toEqual([]);
    expect(await rules('import torch as th\nth = make()\nth.scatter_add(a, 0, i, s)\n')).toEqual([]);
  });
});

describe('guards', () => {
  const body = (cond: string) => `import torch\ndef f(x, i, s, cfg, det):\n    if ${cond}:\n        x.scatter_add_(0, i, s)\n    else:\n        x.scatter_add_(0, i, s)\n`;

  it.each([
    ['torch.are_deterministic_algorithms_enabled()', 'deterministic-branch', 'default-branch'],
    ['not torch.are_deterministic_algorithms_enabled()', 'default-branch', 'deterministic-branch'],
    ['cfg.deterministic_mode', 'deterministic-branch', 'default-branch'],
    ['self.deterministic', 'deterministic-branch', 'default-branch'],
    ['det and cfg.fast', 'deterministic-branch', 'none'],
    ['not det or cfg.fast', 'none', 'deterministic-branch'],
    ['cfg.deterministic_mode is False', 'default-branch', 'deterministic-branch'],
    ['os.environ.get("FLASH_ATTENTION_DETERMINISTIC") == "1"', 'deterministic-branch', 'default-branch'],
    ['getattr(args, "deterministic_mode", False)', 'deterministic-branch', 'default-branch'],
    ['cfg.use_fast_path', 'none', 'none'],
  ])('if %s: then=%s else=%s', async (cond, thenGuard, elseGuard) => {
    const text = `import os\n${body(cond)}`;
    const findings = await check(text, { deterministicMode: 'off' });
    const guardAt = (line: number) => findings.find((f) => f.range.start.line + 1 === line)?.guard ?? 'deterministic-branch';
    expect([guardAt(5), guardAt(7)]).toEqual([thenGuard, elseGuard]);
  });

  it('understands early returns, elif chains, conditional expressions and custom guard names', async () => {
    const text = [
      'import torch',
      'def f(x, i, s, det, cfg):',
      '    if not det:',
      '        return x.scatter_add_(0, i, s)',
      '    x.scatter_add_(0, i, s)',
      '    if cfg.reproducible_run:',
      '        pass',
      '    elif cfg.other:',
      '        x.scatter_add_(0, i, s)',
      '    y = x.scatter_add(0, i, s) if not det else x',
      '    return y',
    ].join('\n');
    expect(await rules(text, { guardNames: ['reproducible_run'] })).toEqual([
      '4:BX102:info:default-branch',
      '9:BX102:info:default-branch',
      '10:BX102:info:default-branch',
    ]);
  });
});

describe('dtype hints: integer accumulation is exact', () => {
  it.each([
    'c = torch.zeros(4, dtype=torch.int64)',
    'c = torch.zeros(4).long()',
    'c = torch.zeros(4).to(torch.int32)',
    'c = torch.arange(8)',
    'c = torch.randint(0, 5, (8,))',
    'c = torch.tensor([1, 2, 3])',
    'c = torch.full((4,), 0)',
    'c = torch.zeros(4, dtype=torch.long) + 1',
  ])('%s', async (definition) => {
    expect(await rules(`import torch\ndef f(i, s):\n    ${definition}\n    c.scatter_add_(0, i, s)\n`)).toEqual([]);
  });

  it.each(['c = torch.zeros(4)', 'c = torch.arange(0.0, 8)', 'c = torch.tensor([1.0, 2])', 'c = torch.zeros(4).long().float()', 'c = make()'])(
    '%s is not known to be integer',
    async (definition) => {
      expect(await rules(`import torch\ndef f(i, s):\n    ${definition}\n    c.scatter_add_(0, i, s)\n`)).toHaveLength(1);
    },
  );

  it('follows the nearest earlier assignment in the same function only', async () => {
    const text = 'import torch\nc = torch.zeros(4, dtype=torch.long)\ndef f(i, s):\n    c.scatter_add_(0, i, s)\n    c = torch.zeros(3).long()\n';
    expect(await rules(text)).toHaveLength(1);
  });
});

describe("the program's deterministic mode", () => {
  it.each([
    ['torch.use_deterministic_algorithms(True)', 0],
    // Behind a flag: the default path runs with the mode off (test/unit/program.test.ts).
    ['torch.use_deterministic_algorithms(mode=args.det)', 1],
    ['torch.set_deterministic_debug_mode("error")', 0],
    ['transformers.enable_full_determinism(0)', 0],
    ['L.Trainer(deterministic=True)', 0],
    ['torch.use_deterministic_algorithms(False)', 1],
    ['torch.set_deterministic_debug_mode(0)', 1],
  ])('%s → %i unguarded scatter finding(s)', async (call, count) => {
    const text = `import torch\nimport transformers\nimport lightning as L\n${call}\ndef f(x, i, s):\n    x.scatter_add_(0, i, s)\n`;
    expect((await check(text, { select: ['BX102'] })).length).toBe(count);
  });

  it('lets the deterministic-mode setting override what the code shows', async () => {
    const text = 'import torch\ntorch.use_deterministic_algorithms(True)\nx.scatter_add_(0, i, s)\n';
    expect((await check(text, { deterministicMode: 'off', select: ['BX102'] })).length).toBe(1);
    expect((await check('import torch\nx.scatter_add_(0, i, s)\n', { deterministicMode: 'on' })).length).toBe(0);
  });
});

describe('value hints through unpacking and writes', () => {
  it('knows the indices of topk/sort/max are integer torch tensors', async () => {
    const { loadChecker } = await import('../support/checker.js');
    const { ImportScope } = await import('../../server/src/analysis/scope.js');
    const { ValueHints } = await import('../../server/src/analysis/values.js');
    const c = await loadChecker();
    const text = 'import torch\nimport numpy as np\ndef f(logits, a):\n    v, i = logits.topk(2)\n    w, j = torch.sort(a)\n    m, k = np.sort(a), 1\n    a[i] = 0\n    i\n    j\n    k\n    v\n';
    const tree = c.parser.parse(text);
    const scope = new ImportScope();
    tree.rootNode.descendantsOfType(['import_statement', 'import_from_statement']).forEach((n) => scope.addImport(n));
    const assignments = tree.rootNode.descendantsOfType('assignment');
    const hints = new ValueHints(scope, () => assignments);
    const uses = tree.rootNode.descendantsOfType('expression_statement').slice(-4).map((s) => hints.of(s.namedChildren[0]!));
    // `m, k = np.sort(a), 1`: each name is bound to its own element, so k is the integer 1.
    expect(uses.map((h) => `${h.dtype}/${h.origin}`)).toEqual(['int/torch', 'int/torch', 'int/unknown', 'unknown/torch']);
    tree.delete();
  });
});

describe('relative imports', () => {
  it('binds names from relative imports as project modules, not tensors', async () => {
    expect(await rules('import torch\nfrom . import tasks\nfrom .util import helpers as h\ntasks.gather(a, b)\nh.scatter_add_(0, i, s)\n')).toEqual([]);
  });
});

describe('text prefilter', () => {
  it('skips files that cannot match but keeps mode switches and whole-word op names', async () => {
    const { loadChecker, settings } = await import('../support/checker.js');
    const c = await loadChecker();
    const analysis = (text: string) => c.analyze(text, settings());
    expect(analysis('def f(inputs, comment):\n    return inputs\n').modeSettings).toEqual([]);
    expect(analysis('import torch\ntorch.use_deterministic_algorithms(True)\n').modeSettings).toHaveLength(1);
    expect(analysis('import torch\nfrom torch import scatter_add as sa\nsa(x, 0, i, s)\n').candidates).toHaveLength(1);
  });
});
