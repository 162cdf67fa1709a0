// Property tests: whatever text the analyser is handed, it returns findings (or nothing), never throws,
// and every finding's range lies inside the text.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { check, loadChecker, settings } from '../support/checker.js';

const FRAGMENTS = [
  'import torch\n', 'import torch as th\n', 'from torch import nn\n', 'import torch.nn.functional as F\n',
  'x.scatter_add_(0, i, s)\n', 'th.index_add(a, 0, i, s)\n', 'if torch.are_deterministic_algorithms_enabled():\n', 'else:\n',
  '    ', 'def f(x, det):\n', '  return x\n', 'torch.backends.cudnn.benchmark = True\n', '# bitexact: ignore[BX102]\n',
  '# bitexact: ignore-file[BX9]\n', '(', ')', '[', ']', ':', '"""', "'", '\\', '\t', '\r\n', '\u00e9', '\ud83d\ude00', '\ud800',
  'torch.use_deterministic_algorithms(True)\n', 'F.interpolate(x, mode="bilinear")\n', 'x[idx] += y\n', 'lambda: ', 'async ',
];

function assertWithin(text: string, findings: Awaited<ReturnType<typeof check>>): void {
  const lines = text.split('\n');
  for (const f of findings) {
    expect(f.range.start.line).toBeLessThan(lines.length);
    expect(f.range.end.line).toBeLessThan(lines.length);
    expect(f.range.start.column).toBeLessThanOrEqual(lines[f.range.start.line]!.length);
  }
}

describe('the analyser on arbitrary input', () => {
  it('never throws on random strings', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 400 }), async (text) => {
        assertWithin(text, await check(`import torch\n${text}`));
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on shuffled Python fragments', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...FRAGMENTS), { maxLength: 40 }), async (parts) => {
        const text = parts.join('');
        assertWithin(text, await check(text));
      }),
      { numRuns: 400 },
    );
  });

  it('never throws on random bytes decoded leniently', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 300 }), async (bytes) => {
        const text = `import torch\n${new TextDecoder('utf-8').decode(bytes)}`;
        assertWithin(text, await check(text));
      }),
      { numRuns: 200 },
    );
  });
});

describe('valid Python tree-sitter-python 0.25 rejects', () => {
  it('a starred operand that is not a primary parses without a syntax error, keeping positions', async () => {
    const c = await loadChecker();
    const text = [
      'import torch',
      'def backward(ctx, g):',
      '    return g, *((None,) * 30)',
      'def h(dx, runner):',
      '    out = (dx, *[None] * 10)',
      '    return None, *runner.inputs, *(None,) * len(runner.params)',
      'def k(x, i, s):',
      '    return x.index_add_(0, i, s)',
      '',
    ].join('\n');
    const [file] = c.checkProgram([{ path: 'm.py', text, settings: settings(), offPath: false }]);
    expect(file!.syntaxErrors).toEqual([]);
    expect(file!.findings.map((f) => [f.rule, f.range.start.line, f.range.start.column])).toEqual([['BX101', 7, 13]]);
  });

  it('real syntax errors are still reported, and products and ** keep their stars', async () => {
    const c = await loadChecker();
    const broken = c.checkProgram([{ path: 'm.py', text: 'import torch\ndef f(:\n    return torch.cumsum(a, 0), *[None] * 2\n', settings: settings(), offPath: false }])[0]!;
    expect(broken.syntaxErrors.length).toBeGreaterThan(0);
    const tree = c.parser.parse('def f(a, b):\n    return a * b, a ** b, *[a] * b\n');
    expect(tree.rootNode.hasError).toBe(false);
    expect(tree.rootNode.descendantsOfType('binary_operator').map((n) => n.text)).toEqual(['a * b', 'a ** b', '[a] * b']);
    tree.delete();
  });
});
