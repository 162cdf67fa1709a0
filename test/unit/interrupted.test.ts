// The language server drops a full analysis that has gone stale (lsp/analysis-runs.ts) at one of its
// checkpoints (engine.ts AnalysisSteps); the parts it finished stay in the document's chunk cache.
// Held to the promise of incremental analysis: after random edits and analyses dropped at random
// points, a full analysis gives the findings of a fresh one of the same text.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SCALING_CASES } from '../../bench/scaling-cases.mjs';
import { ChunkCache } from '../../server/src/analysis/index.js';
import { loadChecker, settings } from '../support/checker.js';
import { corpus, EditedDocument, outcome, randomEdit } from '../support/edited-document.js';

describe('analyses dropped unfinished', () => {
  it('leave the cache correct: the next full analysis equals a fresh one', async () => {
    const checker = await loadChecker();
    const s = settings();
    const files = corpus();
    // Each step: an edit or none (a request cancelled, then the same text analysed again), then an
    // analysis dropped after some checkpoints, or a full one that is compared.
    const step = fc.record({ edit: fc.option(randomEdit, { nil: undefined }), dropAfter: fc.option(fc.nat(40), { nil: undefined }) });
    let dropped = 0;
    let droppedWithParts = 0;
    fc.assert(
      fc.property(fc.constantFrom(...files), fc.array(step, { minLength: 1, maxLength: 8 }), (file, steps) => {
        const doc = new EditedDocument(checker, file.text);
        try {
          doc.analyze(s);
          for (const [i, { edit, dropAfter }] of [...steps, { edit: undefined, dropAfter: undefined }].entries()) {
            if (edit) doc.apply(edit);
            if (dropAfter !== undefined) {
              dropped++;
              if (doc.interruptedAnalysis(s, dropAfter) > 0) droppedWithParts++;
              continue;
            }
            const incremental = outcome(checker, doc.analyze(s), doc.text, s);
            const fresh = outcome(checker, checker.analyze(doc.text, s), doc.text, s);
            if (incremental !== fresh) throw new Error(`${file.name} differs after step ${i} of ${JSON.stringify(steps)}`);
          }
        } finally {
          doc.dispose();
        }
      }),
      { numRuns: 300, seed: 20261201 },
    );
    // Not vacuous: many analyses were dropped with finished parts left in the cache.
    expect(droppedWithParts).toBeGreaterThan(dropped / 4);
  }, 600_000);

  it('stop inside one long function too, which is then analysed again in full', async () => {
    const checker = await loadChecker();
    const s = settings();
    // One function of 500 flagged calls: a single part.
    const text = SCALING_CASES['function-body']!(2);
    const tree = checker.parser.parse(text);
    const cache = new ChunkCache();
    try {
      const steps = checker.analysisSteps(tree, text, s, cache);
      const seen: string[] = [];
      for (let step = steps.next(); !step.done; step = steps.next()) seen.push(step.value);
      // Checkpoints within the function's part (every 64 calls) before it is done: its last step.
      const functionDone = seen.lastIndexOf('part');
      expect(seen.slice(functionDone - 6, functionDone)).toEqual(Array(6).fill('slice'));

      // Dropped inside that function, with a fresh cache: nothing of it is kept, and the next
      // analysis finds every hit.
      const fresh = new ChunkCache();
      const dropped = checker.analysisSteps(tree, text, s, fresh);
      for (let i = 0; i < functionDone - 3; i++) dropped.next();
      dropped.return(undefined as never);
      const again = checker.analyzeTree(tree, text, s, fresh);
      expect(again.candidates.length).toBe(checker.analyze(text, s).candidates.length);
      expect(again.candidates.length).toBeGreaterThan(400);
    } finally {
      tree.delete();
    }
  });
});
