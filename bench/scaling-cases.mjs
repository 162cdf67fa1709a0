// Generated Python files whose analysis once grew faster than their size (issue 10 item 7): each
// case takes a scale k and gives a file k times the base size. The scaling bench (bench/scaling.mjs)
// times them at 1x..8x; test/unit/linear.test.ts counts the tree work at two sizes.
const HEADER = 'import torch\nimport torch.nn.functional as F\nx = torch.zeros(10)\ni = torch.tensor([1])\nv = torch.ones(1)\n';

export const SCALING_CASES = {
  /** Module-level float atomics, one finding per statement. */
  'module-scatter': (k) => HEADER + 'x.scatter_add_(0, i, v)\n'.repeat(250 * k),
  /** Many plain statements, then findings after them at the same level. */
  'plain-then-findings': (k) => HEADER + 'y = 1\n'.repeat(2500 * k) + 'x.scatter_add_(0, i, v)\n'.repeat(25 * k),
  /** The same inside one function body (block, not module). */
  'function-body': (k) => HEADER + 'def f(x, i, v):\n' + '    y = x + 1\n    x.index_add_(0, i, v)\n'.repeat(250 * k),
  /** Calls nested inside each other around a finding: F.relu(F.relu(...x.index_add_(0, i, v)...)). */
  'nested-calls': (k) => HEADER + `y = ${'F.relu('.repeat(250 * k)}x.index_add_(0, i, v)${')'.repeat(250 * k)}\n`,
  /** A chain of method calls, each a finding: x.index_add_(0, i, v).index_add_(0, i, v)... */
  'chained-calls': (k) => HEADER + `y = x${'.index_add_(0, i, v)'.repeat(250 * k)}\n`,
  /** A long sum of tensors, then a finding that reads it: y = x + x + ...; y.index_add_(0, i, v). */
  'long-sum': (k) => HEADER + `y = ${Array(2500 * k).fill('x').join(' + ')}\nx.index_add_(0, i, y)\ny.index_add_(0, i, v)\n`,
  /** A generated model file: many functions, many findings of several rules, guards. */
  'generated-model': (k) => {
    const out = [HEADER, 'class M(torch.nn.Module):'];
    for (let f = 0; f < 25 * k; f++) {
      out.push(
        `    def forward_${f}(self, x, idx, src, cfg):`,
        '        out = torch.zeros_like(x)',
        '        if cfg.deterministic_mode:',
        '            out.index_add_(0, idx, src)',
        '        else:',
        '            out.scatter_add_(0, idx, src)',
        '        y = F.interpolate(out, scale_factor=2, mode="bilinear")',
        '        w = torch.gather(y, 1, idx)',
        '        return w.cumsum(dim=0)',
      );
    }
    return `${out.join('\n')}\n`;
  },
};
