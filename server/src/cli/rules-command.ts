// `bitexact rule ID` (one rule's page) and `bitexact rules` (the catalogue).
import fs from 'node:fs';
import path from 'node:path';
import type { Rule } from '../analysis/rules/rule.js';

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
  return `${rules.map((r) => `${r.id}  ${r.name.padEnd(width)}  ${r.defaultSeverity.padEnd(7)}  ${r.summary}`).join('\n')}\n`;
}

/** One markdown page per rule (the language server links diagnostics to them). */
export function writeRulePages(rules: readonly Rule[], dir: string): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const rule of rules) fs.writeFileSync(path.join(dir, `${rule.id}.md`), formatRulePage(rule));
}
