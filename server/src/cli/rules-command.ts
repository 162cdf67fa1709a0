// `bitexact rule ID` (one rule's page) and `bitexact rules` (the catalogue).
import fs from 'node:fs';
import path from 'node:path';
import type { Rule, RuleFamily } from '../analysis/rules/rule.js';

/** Families in id order, as `bitexact rules` groups them. */
const FAMILY_TITLES: Record<RuleFamily, string> = {
  meta: 'Suppressions, BX0xx',
  'torch-op': 'PyTorch ops, BX1xx',
  config: 'Global PyTorch configuration, BX2xx',
  'rng-data': 'Seeds and data order, BX3xx',
  'custom-kernel': 'Custom kernels: Triton, CUDA and CuPy sources, BX4xx',
  attention: 'Attention and fused-kernel libraries, BX5xx',
  distributed: 'Distributed training and framework flags, BX6xx',
};

export function formatRulePage(rule: Rule): string {
  const facts = rule.facts.map((f) => {
    const where = f.source === 'measured' ? `measured on an H200${f.case ? `, case "${f.case}"` : ''}` : 'PyTorch docs';
    return `- torch ${f.torch || 'any'} (${where}): ${f.text}`;
  });
  return [
    `# ${rule.id} ${rule.name}`,
    '',
    `${rule.summary}`,
    '',
    `Family: ${rule.family}. Typical severity: ${rule.defaultSeverity}.`,
    '',
    rule.docs.trim(),
    ...(facts.length ? ['', '## Torch-version facts', '', ...facts] : []),
    '',
    '## Suppressing',
    '',
    `\`# bitexact: ignore[${rule.id}] -- reason\` on the line (or the line above), or`,
    `\`# bitexact: ignore-file[${rule.id}]\` at the top of the file, or \`ignore = ["${rule.id}"]\` in [tool.bitexact].`,
    '',
  ].join('\n');
}

export function formatRuleList(rules: readonly Rule[], json: boolean): string {
  if (json) {
    const list = rules.map((r) => ({ id: r.id, name: r.name, family: r.family, severity: r.defaultSeverity, summary: r.summary }));
    return `${JSON.stringify(list, null, 2)}\n`;
  }
  const width = Math.max(...rules.map((r) => r.name.length));
  const lines: string[] = [];
  for (const [family, title] of Object.entries(FAMILY_TITLES) as Array<[RuleFamily, string]>) {
    const members = rules.filter((r) => r.family === family);
    if (members.length === 0) continue;
    if (lines.length > 0) lines.push('');
    lines.push(`${title} (${members.length})`);
    for (const r of members) lines.push(`  ${r.id}  ${r.name.padEnd(width)}  ${r.defaultSeverity.padEnd(7)}  ${r.summary}`);
  }
  return `${lines.join('\n')}\n`;
}

/** One markdown page per rule (the language server links diagnostics to them). */
export function writeRulePages(rules: readonly Rule[], dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const rule of rules) fs.writeFileSync(path.join(dir, `${rule.id}.md`), formatRulePage(rule));
}
