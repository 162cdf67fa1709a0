// A deterministic, torch-heavy corpus: every file passes the checker's text prefilter and has many
// calls, guards and assignments, so the bench also measures the analysis itself, not only parsing.
import fs from 'node:fs';
import path from 'node:path';

const BODY = [
  'def forward_{i}(self, x, idx, src, cfg):',
  '    out = torch.zeros_like(x)',
  '    counts = torch.zeros(8, dtype=torch.long)',
  '    counts.scatter_add_(0, idx, torch.ones_like(idx))',
  '    if cfg.deterministic_mode:',
  '        out.index_add_(0, idx, src)',
  '    else:',
  '        out.scatter_add_(0, idx, src)',
  '    y = F.interpolate(out, scale_factor=2, mode="bilinear")',
  '    z = F.gelu(self.proj(y)) + x.sum(dim=-1, keepdim=True)',
  '    v, order = torch.sort(z, dim=-1)',
  '    w = torch.gather(v, 1, order[:, :4])',
  '    h = self.norm(w).cumsum(dim=0) if not cfg.det else w',
  '    return {"out": out, "h": h, "n": counts.max().item()}',
  '',
];

export function writeTorchCorpus(dir, files = 200, functionsPerFile = 20) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  for (let f = 0; f < files; f++) {
    const lines = ['import torch', 'import torch.nn as nn', 'import torch.nn.functional as F', '', `class Block{f}(nn.Module):`.replace('{f}', f)];
    for (let i = 0; i < functionsPerFile; i++) lines.push(...BODY.map((l) => `    ${l.replace('{i}', i)}`.trimEnd()));
    fs.writeFileSync(path.join(dir, `block_${String(f).padStart(3, '0')}.py`), `${lines.join('\n')}\n`);
  }
}
