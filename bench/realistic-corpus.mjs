// A realistic torch file for editor benchmarks: mostly ordinary model code (layers, norms,
// attention, training loop), with a hazard in about one function in ten.
import fs from 'node:fs';

const ORDINARY = [
  'def block_{i}(self, x, mask=None):',
  '    """Pre-norm transformer block {i}."""',
  '    h = self.norm1(x)',
  '    q, k, v = self.qkv(h).chunk(3, dim=-1)',
  '    att = (q @ k.transpose(-2, -1)) * self.scale',
  '    if mask is not None:',
  '        att = att.masked_fill(mask == 0, float("-inf"))',
  '    att = F.softmax(att, dim=-1)',
  '    x = x + self.proj(att @ v)',
  '    x = x + self.mlp(self.norm2(x))',
  '    logger.debug("block %d: %s", {i}, tuple(x.shape))',
  '    return x',
  '',
];
const HAZARD = [
  'def combine_{i}(self, tokens, expert_idx, expert_out):',
  '    out = torch.zeros_like(tokens)',
  '    out.index_add_(0, expert_idx, expert_out)',
  '    return out',
  '',
];

// The dense file of the latency bench: every other function holds three hazards (about 700 findings
// in 5,000 lines), where the cost of re-reporting every finding on each edit shows.
const DENSE_HAZARD = [
  'def combine_{i}(self, tokens, expert_idx, expert_out):',
  '    out = torch.zeros_like(tokens)',
  '    out.index_add_(0, expert_idx, expert_out)',
  '    out.scatter_add_(0, expert_idx, expert_out)',
  '    total = torch.cumsum(out.flatten(), 0)',
  '    return out, total',
  '',
];

export function writeDenseFile(file, lines = 5000) {
  writeRealisticFile(file, lines, (i) => (i % 2 === 1 ? DENSE_HAZARD : ORDINARY));
}

export function writeRealisticFile(file, lines = 5000, blockFor = (i) => (i % 10 === 9 ? HAZARD : ORDINARY)) {
  const out = ['import logging', 'import torch', 'import torch.nn.functional as F', '', 'logger = logging.getLogger(__name__)', '', 'class Model(torch.nn.Module):'];
  for (let i = 0; out.length < lines; i++) {
    const body = blockFor(i);
    out.push(...body.map((l) => `    ${l.replaceAll('{i}', String(i))}`.trimEnd()));
  }
  fs.writeFileSync(file, `${out.slice(0, lines).join('\n')}\n`);
}
