// A rule with a bug, for the tests of rule errors (test/unit/rule-errors.test.ts in the CLI,
// test/lsp/rule-errors.test.ts in the language server): on `Tensor.index_add_`, it throws on
// receivers named `boom` and reports nothing else.
import type { Rule } from '../../server/src/analysis/rules/rule.js';

export const THROWING: Rule = {
  id: 'BX999',
  name: 'throws-on-boom',
  family: 'torch-op',
  defaultSeverity: 'warning',
  summary: 'A rule with a bug, for this test.',
  docs: '',
  facts: [],
  triggers: ['index_add_'],
  calls: ['Tensor.index_add_'],
  onCall(call) {
    if (call.receiver?.text === 'boom') throw new Error('a bug in the rule');
  },
};

/** A training step whose first call makes BX999 throw; BX101 and BX102 still report on it. */
export const TRAIN = ['import torch', '', 'def step(boom, ok, i, v):', '    boom.index_add_(0, i, v)', '    ok.scatter_add_(0, i, v)', ''].join('\n');
