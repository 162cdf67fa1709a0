// What the incremental tests share (test/unit/incremental.test.ts, interrupted.test.ts): a corpus of
// Python files, a comparable form of an analysis, a document edited as the language server's is, and
// random edits of it.
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { ChunkCache, Checker } from '../../server/src/analysis/index.js';
import type { Settings } from '../../server/src/analysis/config.js';
import { ROOT } from './checker.js';

/** Python files with many rule kinds: the rule fixtures and the examples. */
export function corpus(): Array<{ name: string; text: string }> {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.py')) files.push(full);
    }
  };
  walk(path.join(ROOT, 'test/fixtures/rules'));
  walk(path.join(ROOT, 'examples'));
  return files.sort().map((file) => ({ name: path.relative(ROOT, file), text: fs.readFileSync(file, 'utf8') }));
}

/** Everything a shell shows for a file, in a comparable form. */
export function outcome(checker: Checker, analysis: ReturnType<Checker['analyze']>, text: string, s: Settings): string {
  const modes = analysis.modeSettings.map((m) => `${m.mode}:${m.via}:${JSON.stringify(m.range)}`).sort();
  const findings = (['off', 'on', 'warn'] as const).map((mode) => checker.resolve(analysis, text, s, { mode, trains: false }, false));
  return JSON.stringify({ findings, modes, syntaxErrors: analysis.syntaxErrors });
}

/** A random edit (randomEdit): keystrokes anywhere, or whole lines inserted, deleted or duplicated. */
export type RandomEdit = { kind: 'keys'; at: number; remove: number; insert: string } | { kind: 'insert' | 'delete' | 'duplicate'; at: number; insert: string };

export class EditedDocument {
  private tree;
  readonly cache = new ChunkCache();

  constructor(
    private readonly checker: Checker,
    public text: string,
  ) {
    this.tree = checker.parser.parse(text);
  }

  edit(start: number, oldEnd: number, newText: string): void {
    const { tree, text } = this.checker.parser.reparse(this.tree, this.text, { start, oldEnd, newText });
    this.tree.delete();
    this.tree = tree;
    this.text = text;
  }

  apply(e: RandomEdit): void {
    if (e.kind === 'keys') {
      const start = Math.floor(e.at * this.text.length);
      this.edit(start, Math.min(this.text.length, start + e.remove), e.insert);
      return;
    }
    const lines = this.text.split('\n');
    const row = Math.min(lines.length - 1, Math.floor(e.at * lines.length));
    const start = lines.slice(0, row).join('\n').length + (row > 0 ? 1 : 0);
    const line = lines[row] ?? '';
    const indent = /^\s*/.exec(line)![0];
    if (e.kind === 'insert') this.edit(start, start, `${indent}${e.insert}\n`);
    else if (e.kind === 'delete') this.edit(start, Math.min(this.text.length, start + line.length + 1), '');
    else this.edit(start, start, `${line}\n`);
  }

  /**
   * A full analysis dropped after `checkpoints` of its steps, as the language server drops a stale one
   * (lsp/analysis-runs.ts). Returns the parts it finished (and left in the cache).
   */
  interruptedAnalysis(s: Settings, checkpoints: number): number {
    if (!this.checker.mayMatch(this.text)) return 0;
    const steps = this.checker.analysisSteps(this.tree, this.text, s, this.cache);
    let parts = 0;
    for (let i = 0; i < checkpoints; i++) {
      const step = steps.next();
      if (step.done) return parts;
      if (step.value === 'part') parts++;
    }
    steps.return(undefined as never);
    return parts;
  }

  /** As the language server does: a text no rule can match is not even parsed. */
  analyze(s: Settings) {
    return this.checker.mayMatch(this.text) ? this.checker.analyzeTree(this.tree, this.text, s, this.cache) : this.checker.analyze(this.text, s);
  }

  dispose(): void {
    this.tree.delete();
  }
}

export const SNIPPETS = [
  '', '#', '\n', ' ', 'x', '    ', ')', '"', ':',
  '\n    y = torch.zeros(3)\n',
  '\nimport torch.nn.functional as G\n',
  '\nF = None\n',
  '\nif torch.are_deterministic_algorithms_enabled():\n    pass\n',
  '\ndef helper():\n    out.index_add_(0, idx, src)\n',
  '  # bitexact: ignore[BX101]',
  '\ntorch.use_deterministic_algorithms(True)\n',
  '\n    if not torch.are_deterministic_algorithms_enabled():\n        return\n',
];

/** Where in the text an edit goes, as a fraction of its length (fc.double clusters at the ends). */
export const fraction = fc.integer({ min: 0, max: 9999 }).map((n) => n / 10000);

/** Whole statements, inserted at the indentation of the line they go before. */
export const LINES = ['z = 1', 'torch = None', 'F = torch.nn.functional', 'pass', '# a comment', 'out.index_add_(0, idx, src)', 'torch.use_deterministic_algorithms(False)', 'x = torch.randn(3).long()', '# bitexact: ignore'];

// Keystrokes anywhere (syntax errors included), and whole-line edits that keep the file valid,
// which are the ones that leave other functions' cached results in play.
const keystroke = fc.record({ kind: fc.constant('keys' as const), at: fraction, remove: fc.nat(6), insert: fc.constantFrom(...SNIPPETS) });
const lineEdit = fc.record({ kind: fc.constantFrom('insert' as const, 'delete' as const, 'duplicate' as const), at: fraction, insert: fc.constantFrom(...LINES) });
export const randomEdit: fc.Arbitrary<RandomEdit> = fc.oneof({ arbitrary: keystroke, weight: 1 }, { arbitrary: lineEdit, weight: 3 });
