import { argument, literalValue } from '../../syntax.js';
import { defineOpRule } from '../op-rule.js';

export default defineOpRule({
  id: 'BX108',
  name: 'put-nondeterministic',
  summary: '`put_` / `torch.put` varies on CUDA with or without accumulate, and deterministic mode rejects it.',
  calls: ['torch.put', 'Tensor.put_', 'Tensor.put'],
  why: 'races or adds floats in a varying order where positions repeat',
  alternative: 'index the flattened tensor with `view(-1).index_put_((idx,), values, accumulate=True)`, which is stable on CUDA, or `index_add_` under deterministic mode',
  // put_(index, source, accumulate=False) / torch.put(input, index, source, accumulate=False)
  accumulator: (call) =>
    literalValue(argument(call.args, call.receiver ? 2 : 3, 'accumulate')) === true ? (call.receiver ?? argument(call.args, 0, 'input')) : undefined,
  variant: (call, ctx) => {
    const index = argument(call.args, call.receiver ? 0 : 1, 'index');
    const source = argument(call.args, call.receiver ? 1 : 2, 'source');
    if (!index || !source) return undefined;
    if (call.receiver) {
      // `put` is a common method name (queues, caches): out of place, ask for tensor evidence.
      const evidence = call.callee === 'Tensor.put_' || call.args.keywords.has('index') || call.args.keywords.has('source');
      if (!evidence && !ctx.values.isTensor(call.receiver) && !ctx.values.isTensor(index)) return undefined;
    }
    return literalValue(argument(call.args, call.receiver ? 2 : 3, 'accumulate')) === true ? 'accumulate' : 'default';
  },
  variants: {
    default: {
      label: '',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'put_ | accumulate=False fp32, duplicate indices' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
    accumulate: {
      label: 'accumulate=True',
      behaviours: [
        { torch: '>=2.11', byDefault: 'varies', underMode: 'raises', source: 'measured', case: 'put_ | accumulate=True fp32' },
        { torch: '<2.11', byDefault: 'varies', underMode: 'raises', source: 'docs' },
      ],
    },
  },
  docs: `
\`put_(index, source)\` treats \`self\` as 1-D and writes \`source[i]\` at flat position \`index[i]\`.
Without \`accumulate\`, two writes to one position race and a random one survives; with
\`accumulate=True\` the CUDA kernel adds with float atomics, whose order is not fixed. Unlike
\`index_put_\`, neither form has a deterministic CUDA implementation, so deterministic mode raises
on both.

Measured on an H200 with torch 2.11 (1e6 writes into 1e3 positions): 20 distinct results in 20
runs for each form (up to 5.5 apart without accumulate, 1.1e-4 with it), about 0.13 ms per call.
Under \`torch.use_deterministic_algorithms(True)\` both raised RuntimeError.

**Deterministic alternative.** Flatten and use \`index_put_\`: \`t.view(-1).index_put_((idx,), src,
accumulate=True)\` took a sorted path that was bitwise stable by default on CUDA (0.54 ms); for the
overwrite form, make the indices unique first.

\`\`\`python
grad_flat.put_(flat_idx, contrib, accumulate=True)                        # BX108
grad_flat.view(-1).index_put_((flat_idx,), contrib, accumulate=True)      # stable on CUDA
\`\`\`
`,
});
