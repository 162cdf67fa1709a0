// The language server drops a full analysis that has gone stale (lsp/analysis-runs.ts) at one of its
// checkpoints (engine.ts AnalysisSteps); the parts it finished stay in the document's chunk cache.
// Held to the promise of incremental analysis: after random edits and analyses dropped at random
// points, a full analysis gives the findings of a fresh one of the same text.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
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
});
