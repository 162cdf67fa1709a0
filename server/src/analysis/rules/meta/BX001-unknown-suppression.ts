import type { Rule } from '../rule.js';

// Reported by the resolver (resolve.ts), which sees every suppression comment.
const rule: Rule = {
  id: 'BX001',
  name: 'unknown-suppression',
  family: 'meta',
  defaultSeverity: 'hint',
  summary: 'A `# bitexact: ignore[...]` comment names a rule id that does not exist.',
  facts: [],
  triggers: [],
  docs: `
A suppression that names an unknown id silences nothing, which usually means a typo
(\`BX120\` for \`BX102\`) that leaves the finding you meant to silence in place. The quick-fix
removes the comment; \`bitexact rules\` lists every id.
`,
};
export default rule;
