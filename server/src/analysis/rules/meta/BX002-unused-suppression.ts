import type { Rule } from '../rule.js';

// Reported by the resolver (resolve.ts) after every finding of the file has been matched.
const rule: Rule = {
  id: 'BX002',
  name: 'unused-suppression',
  family: 'meta',
  defaultSeverity: 'hint',
  summary: 'A suppression comment silences nothing on its line (or in its file).',
  facts: [],
  triggers: [],
  docs: `
Suppressions outlive the code they were written for. When the call under a
\`# bitexact: ignore[BX102]\` is fixed or moved, the stale comment would silently swallow the next
real finding on that line. Rules switched off by configuration are not counted as unused.
The quick-fix removes the comment.
`,
};
export default rule;
