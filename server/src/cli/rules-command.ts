// `bitexact rule ID` (one rule's page) and `bitexact rules` (the catalogue). A page lists the fixes
// the rule offers, each with a before/after from the rule's fixtures (rule-examples.ts); the build
// writes them to dist/rules/fixes.json, which `bitexact rule` reads.
import fs from 'node:fs';
import path from 'node:path';
import type { Rule, RuleFamily } from '../analysis/rules/rule.js';
import type { FixSafety } from '../analysis/types.js';
import type { FixExample } from './rule-examples.js';

/** What a page shows of a fix: its title, its safety and one example. */
export interface PageFix {
  title: string;
  safety: FixSafety;
  before: string;
  after: string;
}

/** Distinct fixes by title, at most four a rule, in fixture order. */
export function pageFixes(examples: readonly FixExample[]): Map<string, PageFix[]> {
  const byRule = new Map<string, PageFix[]>();
  for (const e of examples) {
    const list = byRule.get(e.rule) ?? [];
    if (list.length < 4 && !list.some((f) => f.title === e.title)) list.push({ title: e.title, safety: e.safety, before: e.before, after: e.after });
    byRule.set(e.rule, list);
  }
  return byRule;
}

/** dist/rules/fixes.json next to the bundle, when the build wrote it. */
export function bundledFixes(): Map<string, PageFix[]> {
  const file = path.join(__dirname, 'rules', 'fixes.json');
  if (!fs.existsSync(file)) return new Map();
  return new Map(Object.entries(JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, PageFix[]>));
}

const SAFETY_NOTE: Record<FixSafety, string> = {
  safe: 'safe: keeps the program\'s meaning; `bitexact check --fix` applies it',
  unsafe: 'unsafe: may change results or make a run raise; `--unsafe-fixes` applies it',
};

function fixSection(fixes: readonly PageFix[]): string[] {
  if (fixes.length === 0) return ['## Fixes', '', 'No automatic fix: the deterministic alternative above says what to change.'];
  const out = ['## Fixes', ''];
  for (const f of fixes) {
    out.push(`- **${f.title}** (${SAFETY_NOTE[f.safety]})`, '', '  ```python', ...indent(`# before\n${f.before}\n# after\n${f.after}`), '  ```', '');
  }
  return out.slice(0, -1);
}

function indent(text: string): string[] {
  return text.split('\n').map((l) => (l ? `  ${l}` : ''));
}

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

export function formatRulePage(rule: Rule, fixes: readonly PageFix[] = []): string {
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
    ...fixSection(fixes),
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

/** The rule as data (`bitexact rule ID --format json`). */
export function ruleJson(rule: Rule, fixes: readonly PageFix[]): string {
  const { id, name, family, defaultSeverity: severity, summary, docs, facts } = rule;
  return `${JSON.stringify({ id, name, family, severity, summary, docs: docs.trim(), facts, fixes }, null, 2)}\n`;
}

/**
 * One markdown page per rule (the language server links diagnostics to them), an index
 * (README.md, so a repository browser shows it) and fixes.json for `bitexact rule`.
 */
export function writeRulePages(rules: readonly Rule[], dir: string, fixes: ReadonlyMap<string, PageFix[]>): void {
  fs.mkdirSync(dir, { recursive: true });
  for (const rule of rules) fs.writeFileSync(path.join(dir, `${rule.id}.md`), formatRulePage(rule, fixes.get(rule.id)));
  fs.writeFileSync(path.join(dir, 'README.md'), formatRuleIndex(rules, fixes));
  fs.writeFileSync(path.join(dir, 'fixes.json'), `${JSON.stringify(Object.fromEntries([...fixes].sort(([a], [b]) => (a < b ? -1 : 1))), null, 1)}\n`);
}

function formatRuleIndex(rules: readonly Rule[], fixes: ReadonlyMap<string, PageFix[]>): string {
  const lines = ['# bitexact rules', '', `${rules.length} rules. Each page says why the hazard is real, the deterministic alternative and its measured cost, the torch versions each fact holds for, and the fixes on offer. Generated by \`npm run docs:rules\`; do not edit.`];
  for (const [family, title] of Object.entries(FAMILY_TITLES) as Array<[RuleFamily, string]>) {
    const members = rules.filter((r) => r.family === family);
    if (members.length === 0) continue;
    lines.push('', `## ${title}`, '', '| rule | name | severity | fix | what it finds |', '|---|---|---|---|---|');
    for (const r of members) {
      const offered = fixes.get(r.id) ?? [];
      const fix = offered.length === 0 ? '' : offered.some((f) => f.safety === 'safe') ? 'safe' : 'unsafe';
      lines.push(`| [${r.id}](${r.id}.md) | ${r.name} | ${r.defaultSeverity} | ${fix} | ${r.summary.replace(/\|/g, '\\|')} |`);
    }
  }
  return `${lines.join('\n')}\n`;
}
