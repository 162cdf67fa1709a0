// Command-line options declared in the file (`parser.add_argument("--seed", ...)`): which of them a
// default run leaves at None, so that an `if args.seed is None:` branch is the default path.
import type { Node } from 'web-tree-sitter';
import { callArguments, literalValue, rootOf } from '../../syntax.js';
import type { RuleContext } from '../rule.js';
import { callsByName, memo } from './file-scan.js';

/** Destinations (`seed`, `manual_seed`) of the file's `add_argument` options whose default is None. */
function optionsDefaultingToNone(root: Node, ctx: RuleContext): Set<string> {
  return memo(ctx, 'cli:none-defaults', () => {
    const out = new Set<string>();
    for (const call of callsByName(root, ctx, 'add_argument', 'method')) {
      const args = callArguments(call);
      if (args.hasSplat) continue;
      const flags = args.positional.map((a) => literalValue(a)).filter((v): v is string => typeof v === 'string');
      const long = flags.find((f) => f.startsWith('--')) ?? flags.find((f) => !f.startsWith('-'));
      if (!long) continue;
      // store_true / store_const / count options have their own non-None defaults.
      if (args.keywords.has('action') || args.keywords.has('required')) continue;
      const byDefault = args.keywords.get('default');
      if (byDefault && literalValue(byDefault) !== null) continue;
      const dest = args.keywords.get('dest');
      const name = dest ? literalValue(dest) : long.replace(/^-+/, '').replace(/-/g, '_');
      if (typeof name === 'string') out.add(name);
    }
    return out;
  });
}

/**
 * Does an `if` condition test that a command-line option the file declares without a default is
 * missing (`args.seed is None`, `not args.seed`, `args.seed == None`)? Its body then runs on a
 * default run.
 */
export function testsUnsetOption(condition: Node, ctx: RuleContext): boolean {
  const m = /^(?:not\s+)?\(?\s*\w+\.(\w+)\s*(?:is\s+None|==\s*None)?\s*\)?$/.exec(condition.text.trim());
  if (!m || (!/\bNone\b/.test(condition.text) && !condition.text.trim().startsWith('not'))) return false;
  return optionsDefaultingToNone(rootOf(condition), ctx).has(m[1]!);
}
