// The literal an argument has on the path a plain call or construction runs: `mode="bicubic"`
// written at the call, a name bound to a literal earlier in the function, a parameter's default
// (`def resize(x, mode="bilinear")`), or `self.mode` as `__init__` sets it, its parameter followed to
// the default (values.ts selfAttributeValue). A parameter without a default, or anything computed, is
// undefined: the caller decides, and the code cannot tell which path runs.
import type { Node } from 'web-tree-sitter';
import { Literal, literalValue, unparenthesize } from './syntax.js';
import type { ValueHints } from './values.js';

export function defaultLiteral(node: Node | undefined, values: ValueHints): Literal | undefined {
  if (!node) return undefined;
  const expr = unparenthesize(node);
  const direct = literalValue(expr);
  if (direct !== undefined) return direct;
  if (expr.type === 'identifier') {
    const bound = values.definition(expr);
    if (bound) return bound.unpacked ? undefined : literalValue(unparenthesize(bound.value));
    return literalValue(values.parameterDefault(expr));
  }
  if (expr.type === 'attribute') return literalValue(values.selfAttributeValue(expr));
  return undefined;
}
