// Hover on a flagged call: the finding, when the hazard applies, the version facts behind it (with
// the measured cost), and a link to the rule's page.
import type { Hover, Position } from 'vscode-languageserver';
import type { Rule } from '../analysis/rules/rule.js';
import type { Finding } from '../analysis/types.js';
import { ruleDocUri, toLspRange } from './convert.js';

const GUARD_NOTE = {
  none: '',
  'default-branch': 'It sits on the path a determinism guard takes when determinism is off; the code already has a deterministic path.',
  'deterministic-branch': 'It sits on the deterministic path of a determinism guard, where it still breaks determinism.',
};

/**
 * `modeNote`: where the program turns the deterministic mode on off its default path (a flag, a test
 * helper), so the reader knows the finding is for the default path.
 */
export function hoverFor(findings: readonly Finding[], rules: ReadonlyMap<string, Rule>, position: Position, modeNote?: string): Hover | undefined {
  const hits = findings.filter((f) => contains(f, position));
  if (hits.length === 0) return undefined;
  const sections = hits.map((finding) => {
    const rule = rules.get(finding.rule);
    const facts = (rule?.facts ?? []).map((f) => `- torch ${f.torch || 'any'} (${f.source === 'measured' ? 'measured on an H200' : 'PyTorch docs'}): ${f.text}`);
    // The diagnostic's own message is shown by the editor next to this hover; do not repeat it.
    return [
      `**${finding.rule} ${finding.name}** · ${finding.severity}`,
      ...(GUARD_NOTE[finding.guard] ? ['', GUARD_NOTE[finding.guard]] : []),
      ...(modeNote ? ['', modeNote] : []),
      ...(rule ? ['', rule.summary] : []),
      ...(facts.length ? ['', '**When it applies**', '', ...facts] : []),
      '',
      `[${finding.rule} documentation](${ruleDocUri(finding.rule)})`,
    ].join('\n');
  });
  const first = hits[0]!;
  return { contents: { kind: 'markdown', value: sections.join('\n\n---\n\n') }, range: toLspRange(first.range) };
}

function contains(f: Finding, p: Position): boolean {
  const { start, end } = f.range;
  const after = p.line > start.line || (p.line === start.line && p.character >= start.column);
  const before = p.line < end.line || (p.line === end.line && p.character <= end.column);
  return after && before;
}
