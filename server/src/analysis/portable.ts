// A file's analysis as plain data, to cross a worker thread's message port: candidates name their
// rule by id (a Rule holds functions, which structured clone refuses) and get it back on arrival.
import type { Candidate, FileAnalysis } from './engine.js';
import type { Rule } from './rules/rule.js';

export type PortableAnalysis = Omit<FileAnalysis, 'candidates'> & { candidates: Array<Omit<Candidate, 'rule'> & { rule: string }> };

export function toPortable(analysis: FileAnalysis): PortableAnalysis {
  return { ...analysis, candidates: analysis.candidates.map((c) => ({ ...c, rule: c.rule.id })) };
}

export function fromPortable(portable: PortableAnalysis, rules: ReadonlyMap<string, Rule>): FileAnalysis {
  return {
    ...portable,
    candidates: portable.candidates.map((c) => {
      const rule = rules.get(c.rule);
      if (!rule) throw new Error(`an analysis names rule ${c.rule}, which this checker does not have`);
      return { ...c, rule };
    }),
  };
}
