// Issue 10 item 7: nothing quadratic. Each generated case (bench/scaling-cases.mjs: module-level
// findings, findings after many statements, deep call nests and chains, a long sum, a model file) is
// checked at two sizes, 1x and 4x, counting the work done on the syntax tree: every call into
// tree-sitter's nodes and cursors, and every character of node text read. Linear work grows 4x;
// the walks this replaced (siblings read back per finding, parents found from the root per step,
// a function's text scanned per use) grew 16x or more. `npm run bench:scaling` times the same cases.
import { Node, TreeCursor } from 'web-tree-sitter';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCALING_CASES } from '../../bench/scaling-cases.mjs';
import { check, loadChecker } from '../support/checker.js';

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
      const small = await workFor(make(1));
      const large = await workFor(make(4));
      // The work grows as the file does (a findings count that fell would mean the case tests nothing).
      expect(large.findings).toBeGreaterThanOrEqual(small.findings);
      expect(large.calls / small.calls, `tree calls ${small.calls} -> ${large.calls}`).toBeLessThan(6);
      expect(large.chars / Math.max(small.chars, 1), `text read ${small.chars} -> ${large.chars}`).toBeLessThan(6);
    }, 120_000);
  }
});
