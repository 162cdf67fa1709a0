// Issue 10 item 7: nothing quadratic. Each generated case (bench/scaling-cases.mjs: module-level
// findings, findings after many statements, deep call nests and chains, a long sum, a model file) is
// checked at two sizes, 4x and 16x, counting the work done on the syntax tree: every call into
// tree-sitter's nodes and cursors, and every character of node text read. Linear work grows 4x;
// the walks this replaced (siblings read back per finding, parents found from the root per step,
// a function's text scanned per use) grew 16x or more. `npm run bench:scaling` times the same cases.
import fs from 'node:fs';
import path from 'node:path';
import { Node, TreeCursor } from 'web-tree-sitter';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCALING_CASES } from '../../bench/scaling-cases.mjs';
import { CALL_CAPTURE_PATTERNS, isCallName } from '../../server/src/analysis/capture-patterns.js';
import { check, loadChecker, ROOT } from '../support/checker.js';

const work = { calls: 0, chars: 0 };
const restore: Array<() => void> = [];

/** Counts every method call and getter read on the prototype (restored after the tests). */
function count(proto: object): void {
  for (const key of Object.getOwnPropertyNames(proto)) {
    if (key === 'constructor') continue;
    const d = Object.getOwnPropertyDescriptor(proto, key)!;
    if (d.get) {
      const get = d.get;
      Object.defineProperty(proto, key, {
        ...d,
        get(this: unknown) {
          work.calls++;
          const value = get.call(this);
          if (key === 'text' && typeof value === 'string') work.chars += value.length;
          return value;
        },
      });
    } else if (typeof d.value === 'function') {
      const fn = d.value as (...args: unknown[]) => unknown;
      Object.defineProperty(proto, key, {
        ...d,
        value(this: unknown, ...args: unknown[]) {
          work.calls++;
          return fn.apply(this, args);
        },
      });
    } else continue;
    restore.push(() => Object.defineProperty(proto, key, d));
  }
}

async function workFor(text: string): Promise<{ calls: number; chars: number; findings: number }> {
  work.calls = 0;
  work.chars = 0;
  const findings = (await check(text)).length;
  return { ...work, findings };
}

describe('analysis work grows linearly with the file', () => {
  beforeAll(async () => {
    await loadChecker();
    count(Node.prototype);
    count(TreeCursor.prototype);
  });
  afterAll(() => {
    for (const undo of restore.reverse()) undo();
  });

  for (const [name, make] of Object.entries(SCALING_CASES)) {
    it(name, async () => {
      // Both sizes above FLAT_PART_BYTES where a case has one large part, so both read it the same way.
      const small = await workFor(make(4));
      const large = await workFor(make(16));
      // The work grows as the file does (a findings count that fell would mean the case tests nothing).
      expect(large.findings).toBeGreaterThanOrEqual(small.findings);
      expect(large.calls / small.calls, `tree calls ${small.calls} -> ${large.calls}`).toBeLessThan(6);
      expect(large.chars / Math.max(small.chars, 1), `text read ${small.chars} -> ${large.chars}`).toBeLessThan(6);
    }, 120_000);
  }
});

describe('call names in large parts', () => {
  it('isCallName keeps exactly the identifiers the call patterns capture, in every rule fixture', async () => {
    const checker = await loadChecker();
    const patterns = checker.parser.query(CALL_CAPTURE_PATTERNS);
    const identifiers = checker.parser.query('(identifier) @call');
    const dir = path.join(ROOT, 'test/fixtures/rules');
    let compared = 0;
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.py'))) {
      const tree = checker.parser.parse(fs.readFileSync(path.join(dir, file), 'utf8'));
      const byPattern = patterns.captures(tree.rootNode).map((c) => c.node.id);
      const byFilter = identifiers.captures(tree.rootNode).filter((c) => isCallName(c.node)).map((c) => c.node.id);
      expect(byFilter, file).toEqual(byPattern);
      compared += byPattern.length;
      tree.delete();
    }
    expect(compared).toBeGreaterThan(1000);
  });
});

describe('large parts', () => {
  it('a function over 32 KB (read by a walk, not the call patterns) gives the same findings, in forty rule fixtures', async () => {
    const dir = path.join(ROOT, 'test/fixtures/rules');
    // A long comment on each one-line `def` header makes its function a large part; no line moves.
    const pad = `  # ${'x'.repeat(33 * 1024)}`;
    let findings = 0;
    let padded = 0;
    // Forty fixtures, every fourth by name, keep the test short.
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith('.py')).sort().filter((_, i) => i % 4 === 0).slice(0, 40)) {
      const text = fs.readFileSync(path.join(dir, file), 'utf8');
      const large = text.replace(/^(\s*(?:async\s+)?def [^\n#]*\):)[ \t]*$/gm, (line) => `${line}${pad}`);
      if (large === text) continue;
      padded++;
      const shape = (found: Awaited<ReturnType<typeof check>>) => found.map((f) => `${f.range.start.line}:${f.range.start.column} ${f.rule} ${f.severity} ${f.message}`);
      const before = shape(await check(text, {}, `pkg/${file}`));
      expect(shape(await check(large, {}, `pkg/${file}`)), file).toEqual(before);
      findings += before.length;
    }
    expect(padded).toBeGreaterThan(30);
    expect(findings).toBeGreaterThan(100);
  }, 300_000);
});
