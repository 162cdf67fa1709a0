// The language server keeps per-function results between keystrokes (chunk-cache.ts). These tests
// hold it to its promise: after any sequence of edits the findings equal a fresh analysis of the
// same text, and only the edited function is analysed again.
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ChunkCache, Checker } from '../../server/src/analysis/index.js';
import type { Rule } from '../../server/src/analysis/rules/rule.js';
import { editTree, TextChange } from '../../server/src/analysis/parse.js';
import { loadChecker, ROOT, settings } from '../support/checker.js';
import { corpus, EditedDocument, fraction, LINES, outcome, randomEdit } from '../support/edited-document.js';

/** A class of methods, a hazard in every third: the shape the fast path (chunk-edit.ts) is for. */
function modelFile(methods: number): string {
  const out = ['import torch', 'import torch.nn.functional as F', '', '', 'class Model(torch.nn.Module):'];
  for (let i = 0; i < methods; i++) {
    out.push(`    def block_${i}(self, x, idx, src):`, `        """Block ${i}."""`, '        h = F.softmax(x, dim=-1)');
    if (i % 3 === 0) out.push('        h.index_add_(0, idx, src)');
    out.push('        return h', '');
  }
  return out.join('\n');
}

describe('incremental analysis', () => {
  it('after random edits, gives the findings of a fresh analysis of the same text', async () => {
    const checker = await loadChecker();
    const s = settings();
    const files = corpus();
    expect(files.length).toBeGreaterThan(50);
    fc.assert(
      fc.property(fc.constantFrom(...files), fc.array(randomEdit, { minLength: 1, maxLength: 8 }), (file, edits) => {
        const doc = new EditedDocument(checker, file.text);
        try {
          doc.analyze(s);
          for (const e of edits) {
            doc.apply(e);
            const incremental = outcome(checker, doc.analyze(s), doc.text, s);
            const fresh = outcome(checker, checker.analyze(doc.text, s), doc.text, s);
            if (incremental !== fresh) throw new Error(`${file.name} differs after edits ${JSON.stringify(edits)}`);
          }
        } finally {
          doc.dispose();
        }
      }),
      { numRuns: 400, seed: 20261129 },
    );
  });

  // Facts read from another function of the file (values.ts: what a module-level helper returns, a
  // module-level cache a function fills, an element of the tuple a helper returns): the function
  // asking keeps no cached hit, so editing only the helper changes the asking function's findings.
  it('a hit that read another function of the file changes when only that function is edited', async () => {
    const checker = await loadChecker();
    const s = settings();
    const cases: Array<{ text: string; from: string; to: string }> = [
      {
        text: ['import torch', '', '', 'def table_of(k, weight):', '    t = torch.empty(2, k)', '    t[:] = weight', '    return t', '', '', 'def pick(weight, k):', '    ids = torch.argmax(weight.view(-1, k), dim=1).unsqueeze(1).expand(-1, k)', '    return torch.gather(table_of(k, weight).cuda(), 0, ids)', ''].join('\n'),
        from: '    t[:] = weight\n',
        to: '',
      },
      {
        text: ['import torch', '', 'cached = None', '', '', 'def table_of(k):', '    global cached', '    if cached is None:', '        cached = torch.ones(2, k)', '    return cached', '', '', 'def pick(weight, k):', '    ids = torch.argmax(weight.view(-1, k), dim=1).unsqueeze(1).expand(-1, k)', '    return torch.gather(table_of(k).cuda(), 0, ids)', ''].join('\n'),
        from: 'cached = torch.ones(2, k)',
        to: 'cached = torch.nn.Parameter(torch.ones(2, k))',
      },
      {
        text: ['import torch', '', '', 'def order_of(x):', '    scores = x.sum(-1)', '    return scores, torch.arange(x.shape[0], device=x.device)', '', '', 'def pick(x, weight):', '    scores, ids = order_of(x)', '    return torch.gather(weight, 0, ids)', ''].join('\n'),
        from: 'torch.arange(x.shape[0], device=x.device)',
        to: 'torch.randint(0, 4, (x.shape[0],), device=x.device)',
      },
    ];
    for (const { text, from, to } of cases) {
      const doc = new EditedDocument(checker, text);
      try {
        const before = outcome(checker, doc.analyze(s), doc.text, s);
        const at = text.indexOf(from);
        doc.edit(at, at + from.length, to);
        const incremental = outcome(checker, doc.analyze(s), doc.text, s);
        const fresh = outcome(checker, checker.analyze(doc.text, s), doc.text, s);
        // The edit matters (the case tests something), and the incremental answer is the fresh one.
        expect(fresh, from).not.toBe(before);
        expect(incremental, from).toBe(fresh);
      } finally {
        doc.dispose();
      }
    }
  });

  it('analyses an edit inside one function without parsing the file, with the findings of a full analysis', async () => {
    const checker = await loadChecker();
    const s = settings();
    const files = [...corpus(), ...Array.from({ length: 40 }, (_, i) => ({ name: `model_${i}.py`, text: modelFile(6 + (i % 7)) }))];
    let fast = 0;
    let edits = 0;
    // The generated model files' functions stand alone: their edits should mostly take the fast path.
    let modelFast = 0;
    let modelEdits = 0;
    const lineEdit = fc.record({ kind: fc.constantFrom('insert' as const, 'delete' as const, 'type' as const), at: fraction, insert: fc.constantFrom(...LINES, 'x', 'x ', '(', ':') });
    fc.assert(
      fc.property(fc.constantFrom(...files), fc.array(lineEdit, { minLength: 1, maxLength: 10 }), (file, steps) => {
        let text = file.text;
        let tree = checker.parser.parse(text);
        const cache = new ChunkCache();
        try {
          checker.analyzeTree(tree, text, s, cache);
          let pending: TextChange[] = [];
          for (const step of steps) {
            const lines = text.split('\n');
            const row = Math.min(lines.length - 1, Math.floor(step.at * lines.length));
            const start = lines.slice(0, row).join('\n').length + (row > 0 ? 1 : 0);
            const line = lines[row]!;
            const indent = /^\s*/.exec(line)![0];
            const change =
              step.kind === 'type'
                ? { start: start + indent.length, oldEnd: start + indent.length, newText: step.insert }
                : step.kind === 'insert'
                  ? { start, oldEnd: start, newText: `${indent}${step.insert}\n` }
                  : { start, oldEnd: Math.min(text.length, start + line.length + 1), newText: '' };
            // As the language server does: tell the tree, parse only when the fast path declines.
            const before = text;
            text = editTree(tree, text, change);
            pending.push(change);
            edits++;
            if (file.name.startsWith('model_')) modelEdits++;
            const quick = checker.analyzeEdit(text, pending, s, cache);

            pending = [];
            // A provisional answer (the function no longer parses) is not the full analysis's: the
            // server follows it with one; here the file is parsed as when the fast path declines.
            if (quick && !quick.provisional) {
              fast++;
              if (file.name.startsWith('model_')) modelFast++;
              const expected = outcome(checker, checker.analyze(text, s), text, s);
              if (outcome(checker, quick, text, s) !== expected) throw new Error(`${file.name}: the fast path differs after ${JSON.stringify(steps)}`);
            } else {
              let next = checker.parser.parse(text, tree);
              tree.delete();
              tree = next;
              if (tree.rootNode.hasError) {
                // Undo a keystroke that broke the file, as a person would: the fast path needs clean code.
                text = editTree(tree, text, { start: change.start, oldEnd: change.start + change.newText.length, newText: before.slice(change.start, change.oldEnd) });
                next = checker.parser.parse(text, tree);
                tree.delete();
                tree = next;
              }
              checker.analyzeTree(tree, text, s, cache);
            }
          }
        } finally {
          tree.delete();
        }
      }),
      { numRuns: 300, seed: 7 },
    );
    // Not vacuous: edits took the fast path, and most of those in functions that stand alone. (The
    // rule fixtures mostly decline it, having file rules or module-level code, so their share of the
    // sample moves the overall ratio as fixtures come and go.)
    expect(fast).toBeGreaterThan(edits / 20);
    expect(modelFast).toBeGreaterThan(modelEdits / 5);
  });

  it('answers a keystroke that breaks one function provisionally, and the one that repairs it quickly', async () => {
    const checker = await loadChecker();
    const s = settings();
    let text = modelFile(7);
    let tree = checker.parser.parse(text);
    const cache = new ChunkCache();
    const hits = (analysis: ReturnType<Checker['analyze']>) => analysis.candidates.map((c) => `${c.rule.id}@${c.range.start.line}:${c.range.start.column}`);
    try {
      const clean = hits(checker.analyzeTree(tree, text, s, cache));
      expect(clean.length).toBeGreaterThan(1);
      // `x` typed at the end of a line of block_0: the function no longer parses.
      const line = text.indexOf('\n', text.indexOf('h = F.softmax', text.indexOf('def block_0')));
      const broken = editTree(tree, text, { start: line, oldEnd: line, newText: 'x' });
      const pending: TextChange[] = [{ start: line, oldEnd: line, newText: 'x' }];
      const guess = checker.analyzeEdit(broken, pending, s, cache)!;
      expect(guess.provisional).toBe(true);
      expect(hits(guess)).toEqual(clean);
      // The layout keeps the clean text: the repairing keystroke, with the edits since, is quick and exact.
      text = editTree(tree, broken, { start: line, oldEnd: line + 1, newText: '' });
      pending.push({ start: line, oldEnd: line + 1, newText: '' });
      const repaired = checker.analyzeEdit(text, pending, s, cache)!;
      expect(repaired.provisional).toBeUndefined();
      expect(outcome(checker, repaired, text, s)).toBe(outcome(checker, checker.analyze(text, s), text, s));
      // An unfinished line typed above block_0's hit: the hits below it move down with the new line.
      const at = text.indexOf('        h.index_add_', text.indexOf('def block_0'));
      const opened = editTree(tree, text, { start: at, oldEnd: at, newText: '        y = (\n' });
      const moved = checker.analyzeEdit(opened, [{ start: at, oldEnd: at, newText: '        y = (\n' }], s, cache)!;
      expect(moved.provisional).toBe(true);
      expect(hits(moved)).toEqual(clean.map((h) => h.replace(/@(\d+)/, (_, row: string) => `@${Number(row) + 1}`)));
    } finally {
      tree.delete();
    }
  });

  it('answers a word typed at column 0 between two methods, or after a def line, provisionally; declines valid code', async () => {
    const checker = await loadChecker();
    const s = settings();
    const text = modelFile(7);
    const tree = checker.parser.parse(text);
    const cache = new ChunkCache();
    const hits = (analysis: ReturnType<Checker['analyze']>) => analysis.candidates.map((c) => `${c.rule.id}@${c.range.start.line}:${c.range.start.column}`);
    try {
      const clean = hits(checker.analyzeTree(tree, text, s, cache));
      const gap = text.indexOf('\n\n    def block_1') + 1;
      const block1Row = text.slice(0, gap).split('\n').length;
      const quick = (edits: TextChange[]) => {
        let now = text;
        for (const e of edits) now = now.slice(0, e.start) + e.newText + now.slice(e.oldEnd);
        return { now, analysis: checker.analyzeEdit(now, edits, s, cache) };
      };
      // `x` on the blank line: the class ends there and block_1, indented, is an unexpected indent.
      const typed = quick([{ start: gap, oldEnd: gap, newText: 'x' }]).analysis!;
      expect(typed.provisional).toBe(true);
      expect(hits(typed)).toEqual(clean);
      // A new line `x`: the hits of the methods below move down with it.
      const line = quick([{ start: gap, oldEnd: gap, newText: 'x\n' }]).analysis!;
      expect(line.provisional).toBe(true);
      expect(hits(line)).toEqual(clean.map((h) => h.replace(/@(\d+)/, (_, row: string) => (Number(row) >= block1Row ? `@${Number(row) + 1}` : `@${row}`))));
      // Typed and deleted: the text analysed last, whose analysis stands (a fresh one agrees).
      const back = quick([{ start: gap, oldEnd: gap, newText: 'x' }, { start: gap, oldEnd: gap + 1, newText: '' }]);
      expect(back.now).toBe(text);
      expect(back.analysis!.provisional).toBeUndefined();
      expect(outcome(checker, back.analysis!, text, s)).toBe(outcome(checker, checker.analyze(text, s), text, s));
      // Valid Python there (a block opened, a string opened, an indented statement): a real analysis.
      for (const newText of ['if x:', 'x = """', '    x', 'x(']) expect(quick([{ start: gap, oldEnd: gap, newText }]).analysis).toBeUndefined();
      // After the class's last method, module-level code follows at column 0: valid, analysed.
      const end = text.length;
      expect(checker.analyzeEdit(`${text}\nx\n`, [{ start: end, oldEnd: end, newText: '\nx\n' }], s, cache)).toBeUndefined();
      // `def block_0(...):x`: its body's lines follow it indented deeper, an unexpected indent.
      const colon = text.indexOf(':', text.indexOf('def block_0')) + 1;
      const header = quick([{ start: colon, oldEnd: colon, newText: 'x' }]).analysis!;
      expect(header.provisional).toBe(true);
      expect(hits(header)).toEqual(clean);
    } finally {
      tree.delete();
    }
  });

  it('analyses again only the function that changed, unless the file context changed', async () => {
    const base = await loadChecker();
    const calls: Record<string, number> = { local: 0, wide: 0 };
    const counting = (id: string, locality: 'function' | undefined): Rule => ({
      id,
      name: id,
      family: 'torch-op',
      defaultSeverity: 'warning',
      summary: '',
      docs: '',
      facts: [],
      triggers: ['torch'],
      calls: ['torch.flip'],
      ...(locality ? { locality } : {}),
      onCall: (call, ctx) => {
        calls[locality ? 'local' : 'wide']!++;
        ctx.report({ node: call.node, outcomes: { off: { severity: 'warning', message: id } } });
      },
    });
    const checker = await Checker.create({ runtimeDir: path.join(ROOT, 'node_modules/web-tree-sitter'), python: path.join(ROOT, 'node_modules/tree-sitter-python/tree-sitter-python.wasm') }, [
      counting('BX901', 'function'),
      counting('BX902', undefined),
    ]);
    expect(base).not.toBe(checker);
    const text = 'import torch\n\nclass M:\n    def a(self, x):\n        return torch.flip(x, [0])\n\n    def b(self, x):\n        return torch.flip(x, [1])\n\ndef c(x):\n    return torch.flip(x, [2])\n';
    const doc = new EditedDocument(checker, text);
    const s = settings();
    const analyze = () => {
      calls.local = calls.wide = 0;
      const hits = doc.analyze(s).candidates.map((c) => `${c.rule.id}@${c.range.start.line}`).sort();
      return { local: calls.local!, wide: calls.wide!, hits };
    };
    try {
      expect(analyze()).toEqual({ local: 3, wide: 3, hits: ['BX901@10', 'BX901@4', 'BX901@7', 'BX902@10', 'BX902@4', 'BX902@7'] });
      expect(doc.cache.size).toBe(3);
      // A new line inside b: only b is analysed again by the local rule; c's hit moves down a line.
      doc.edit(doc.text.indexOf('        return torch.flip(x, [1])'), doc.text.indexOf('        return torch.flip(x, [1])'), '        y = 1\n');
      expect(analyze()).toEqual({ local: 1, wide: 3, hits: ['BX901@11', 'BX901@4', 'BX901@8', 'BX902@11', 'BX902@4', 'BX902@8'] });
      // An alias at module level changes what names mean: everything is analysed again.
      doc.edit(doc.text.indexOf('\nclass M'), doc.text.indexOf('\nclass M'), '\nflip = None\n');
      expect(analyze().local).toBe(3);
      // Nothing changed: nothing is analysed again by the local rule.
      expect(analyze().local).toBe(0);
      // A name rebound inside one function is rebound for the whole file (scope.ts): all hits go.
      const inC = doc.text.indexOf('    return torch.flip(x, [2])');
      doc.edit(inC, inC, '    torch = None\n');
      expect(analyze()).toEqual({ local: 0, wide: 0, hits: [] });
    } finally {
      doc.dispose();
    }
  });

  it('analyses again a function whose hit read another function (a caller passing its mode)', async () => {
    const checker = await loadChecker();
    const text = 'import torch.nn.functional as F\n\ndef resize(t, mode):\n    return F.interpolate(t, size=(8, 8), mode=mode)\n\ndef caller(t):\n    return resize(t, "bicubic")\n';
    const doc = new EditedDocument(checker, text);
    const s = settings({ select: ['BX123'] });
    const hits = () => doc.analyze(s).candidates.map((c) => `${c.rule.id}@${c.range.start.line}`);
    try {
      expect(hits()).toEqual(['BX123@3']);
      // Only the caller changes: the callee's cached hit must not survive.
      const at = doc.text.indexOf('"bicubic"');
      doc.edit(at, at + '"bicubic"'.length, '"nearest"');
      expect(hits()).toEqual([]);
    } finally {
      doc.dispose();
    }
  });

  it('notices a module-level early exit added between two cached functions', async () => {
    const checker = await loadChecker();
    const s = settings();
    const text = 'import torch\n\ndef a(out, idx, src):\n    out.index_add_(0, idx, src)\n\ndef b(out, idx, src):\n    out.index_add_(0, idx, src)\n';
    const doc = new EditedDocument(checker, text);
    try {
      const guards = () => doc.analyze(s).candidates.map((c) => `${c.rule.id}@${c.range.start.line}:${c.guard}`);
      expect(guards()).toEqual(['BX101@3:none', 'BX101@6:none']);
      const at = doc.text.indexOf('def b');
      doc.edit(at, at, 'if not torch.are_deterministic_algorithms_enabled():\n    raise SystemExit\n\n');
      const fresh = checker.analyze(doc.text, s).candidates.map((c) => `${c.rule.id}@${c.range.start.line}:${c.guard}`);
      expect(fresh).toEqual(['BX101@3:none', 'BX101@9:deterministic-branch']);
      expect(guards()).toEqual(fresh);
    } finally {
      doc.dispose();
    }
  });

  it('notices an early exit moving out of a class body, where it starts to guard the next class', async () => {
    const checker = await loadChecker();
    const s = settings();
    const exit = 'if not torch.are_deterministic_algorithms_enabled():\n        raise SystemExit\n';
    const text = `import torch\n\nclass A:\n    def a(self):\n        pass\n    ${exit}\nclass B:\n    def b(self, out, idx, src):\n        out.index_add_(0, idx, src)\n`;
    const doc = new EditedDocument(checker, text);
    try {
      const guards = () => doc.analyze(s).candidates.map((c) => `${c.rule.id}@${c.range.start.line}:${c.guard}`);
      expect(guards()).toEqual(['BX101@10:none']);
      // Unindent the `if` line: every text stays the same, but the `if` now sits at module level.
      const at = doc.text.indexOf('    if not');
      doc.edit(at, at + 4, '');
      const fresh = checker.analyze(doc.text, s).candidates.map((c) => `${c.rule.id}@${c.range.start.line}:${c.guard}`);
      expect(fresh).toEqual(['BX101@10:deterministic-branch']);
      expect(guards()).toEqual(fresh);
    } finally {
      doc.dispose();
    }
  });
});

describe('the fast path and a class __init__', () => {
  it('leaves a method that reads what __init__ assigns to self to the full analysis, which sees the class', async () => {
    const checker = await loadChecker();
    const s = settings();
    let text = [
      'import torch',
      '',
      '',
      'class Store:',
      '    def __init__(self, n):',
      '        self.cache = {}',
      '',
      '    def put(self, key, value, idx, src):',
      '        self.cache[key] = value',
      '        return src',
      '',
    ].join('\n');
    const tree = checker.parser.parse(text);
    const cache = new ChunkCache();
    try {
      checker.analyzeTree(tree, text, s, cache);
      const at = text.indexOf('        return src');
      const change = { start: at, oldEnd: at, newText: '        z = 1\n' };
      text = editTree(tree, text, change);
      // Parsed alone, `put` cannot see that self.cache is a dict: no quick answer.
      expect(checker.analyzeEdit(text, [change], s, cache)).toBeUndefined();
      expect(outcome(checker, checker.analyze(text, s), text, s)).not.toContain('BX107');
    } finally {
      tree.delete();
    }
  });
});
