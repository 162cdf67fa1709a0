// Hover on a flagged call: the finding's detail (the alternative, its cost, the guard, the mode),
// the version facts behind it, and a link to the rule's page. The editor shows the diagnostic's
// message next to the hover, so the hover never repeats it (nor the rule's summary, which says the same).
import type { Hover, Position } from 'vscode-languageserver';
import type { Rule } from '../analysis/rules/rule.js';
import type { Finding } from '../analysis/types.js';
import { ruleDocUri, toLspRange } from './convert.js';

/**
 * `runNote`: the probed pair whose divergent path the finding is on (lsp/pair-divergence.ts).
 * `modeNote`: where the program turns the deterministic mode on off its default path (a flag, a test
 * helper), so the reader knows the finding is for the default path.
 */
export function hoverFor(findings: readonly Finding[], rules: ReadonlyMap<string, Rule>, position: Position, modeNote?: string, runNote?: (finding: Finding) => string | undefined): Hover | undefined {
  const hits = findings.filter((f) => contains(f, position));
  if (hits.length === 0) return undefined;
  const sections = hits.map((finding) => {
    const rule = rules.get(finding.rule);
    const facts = (rule?.facts ?? []).map((f) => `- torch ${f.torch || 'any'} (${f.source === 'measured' ? 'measured on an H200' : 'PyTorch docs'}): ${f.text}`);
    const ran = runNote?.(finding);
    return [
      `**${finding.rule} ${finding.name}** · ${finding.severity}`,
      ...(ran ? ['', `**${ran}**`] : []),
      ...(finding.detail ? ['', finding.detail] : []),
      ...(modeNote ? ['', modeNote] : []),
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
