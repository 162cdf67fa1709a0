// The rank a tensor expression's shape arguments give it (`torch.zeros(a, b)`, `x.view(-1)`), for
// ValueHints: a 1-D float scan is the one measured to vary.
import type { Node } from 'web-tree-sitter';
import { argument, type callArguments } from './syntax.js';

export function factoryRank(name: string, args: ReturnType<typeof callArguments>): number | undefined {
  if (!/^(randn|rand|zeros|ones|empty|full|randint)$/.test(name)) return undefined;
  if (name === 'full') return tupleLength(args.positional[0]);
  if (name === 'randint') return tupleLength(argument(args, 2, 'size') ?? argument(args, 1, 'size'));
  return shapeRank(args);
}

/** Rank given by shape arguments: `view(a, b, c)` or `view((a, b, c))`. */
export function shapeRank(args: ReturnType<typeof callArguments>): number | undefined {
  if (args.hasSplat || args.positional.length === 0) return undefined;
  const only = args.positional[0];
  if (args.positional.length === 1) return tupleLength(only) ?? (only?.type === 'integer' || (only?.type === 'unary_operator' && only.text.replace(/\s/g, '') === '-1') ? 1 : undefined);
  return args.positional.length;
}

function tupleLength(node: Node | undefined): number | undefined {
  if (!node || (node.type !== 'tuple' && node.type !== 'list')) return undefined;
  if (node.namedChildren.some((c) => c.type === 'list_splat')) return undefined;
  return node.namedChildCount;
}
