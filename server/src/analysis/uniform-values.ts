// Tensors whose elements are all one value: `torch.ones(n)`, `ones_like(x)`, `x.new_ones(n)`,
// `torch.full(size, 2.0)`, `full_like(x, 1)`, followed through names, casts, moves and views. Adding
// equal values into a slot gives the same chain of partial sums in any order (every addend is the
// same number), so an atomic accumulation of them (`count.index_add_(0, ids, ones)`, a histogram
// of ones in float32) is reproducible even in a float dtype; a duplicate plain write of them
// (`scatter_` with repeated indices) writes the same value whichever write lands last.
import type { Node } from 'web-tree-sitter';
import type { ImportScope } from './scope.js';
import { argument, callArguments, literalValue, unparenthesize } from './syntax.js';

const FILLED = new Set(['ones', 'ones_like', 'zeros', 'zeros_like']);
/** Factories whose fill value is an argument: (name, its position). */
const FILLED_WITH: Record<string, number> = { full: 1, full_like: 1, new_full: 1 };
const FILLED_METHODS = new Set(['new_ones', 'new_zeros']);
/** Methods that keep every element equal: casts, moves, copies, views and broadcasts. */
const KEEPS_FILL = new Set(['to', 'float', 'half', 'double', 'bfloat16', 'long', 'int', 'cuda', 'cpu', 'contiguous', 'clone', 'detach', 'view', 'reshape', 'expand', 'expand_as', 'flatten', 'unsqueeze', 'squeeze', 'permute', 'transpose', 'repeat', 'type_as']);
const MAX_DEPTH = 8;

interface Definitions {
  definition(identifier: Node): { value: Node; unpacked: boolean } | undefined;
  /** Every value the name may hold there (values.ts `definitions`): each branch's binding. */
  definitions(identifier: Node): Node[];
}

/** Is every element of `node` the same number, by how the function made it? */
export function isUniformFill(values: Definitions, scope: ImportScope, node: Node | undefined, depth = 0): boolean {
  if (!node || depth > MAX_DEPTH) return false;
  const expr = unparenthesize(node);
  if (expr.type === 'identifier') {
    const def = values.definition(expr);
    // Uniform only if every branch that may have bound it makes a uniform value.
    return !!def && !def.unpacked && values.definitions(expr).every((value) => isUniformFill(values, scope, value, depth + 1));
  }
  if (expr.type !== 'call') return false;
  const fn = expr.childForFieldName('function');
  if (!fn) return false;
  const args = callArguments(expr);
  const qualified = scope.resolveExpression(fn);
  if (qualified !== undefined) {
    if (!qualified.startsWith('torch.')) return false;
    const name = qualified.slice(qualified.lastIndexOf('.') + 1);
    if (FILLED.has(name)) return true;
    return Object.hasOwn(FILLED_WITH, name) && typeof literalValue(argument(args, FILLED_WITH[name]!, 'fill_value')) === 'number';
  }
  if (fn.type !== 'attribute') return false;
  const method = fn.childForFieldName('attribute')?.text ?? '';
  if (FILLED_METHODS.has(method)) return true;
  if (method === 'new_full') return typeof literalValue(argument(args, 1, 'fill_value')) === 'number';
  return KEEPS_FILL.has(method) && isUniformFill(values, scope, fn.childForFieldName('object') ?? undefined, depth + 1);
}
