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

/** Helpers that build an n-tuple from one value: timm's `to_4tuple`, torch's `_pair` / `_quadruple`. */
const TUPLE_HELPER = /(^|\.)_?to_?([1-6])tuple$/;
const NAMED_TUPLE_HELPER: Record<string, number> = { _single: 1, _pair: 2, _triple: 3, _quadruple: 4 };
const MAX_DEPTH = 4;

/**
 * How many elements the tuple or list an argument holds has on a plain call: a literal display, a
 * name or `self.x` followed as defaultLiteral does, an n-tuple helper (`to_4tuple(p)`, `_pair(k)`),
 * or a method of the same class whose returns all agree (`self._padding(x)` returning
 * `(left, right, top, bottom)`). A splat or anything else is undefined.
 */
export function defaultLength(node: Node | undefined, values: ValueHints, depth = 0): number | undefined {
  if (!node || depth > MAX_DEPTH) return undefined;
  const expr = unparenthesize(node);
  const next = (n: Node | undefined | null) => defaultLength(n ?? undefined, values, depth + 1);
  switch (expr.type) {
    case 'tuple':
    case 'list':
      return expr.namedChildren.some((c) => c.type === 'list_splat') ? undefined : expr.namedChildCount;
    case 'identifier': {
      const bound = values.definition(expr);
      if (bound) return bound.unpacked ? undefined : next(bound.value);
      return next(values.parameterDefault(expr));
    }
    case 'attribute':
      return next(values.selfAttributeValue(expr));
    case 'call': {
      const fn = expr.childForFieldName('function');
      const name = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : fn?.text;
      if (!fn || !name) return undefined;
      const helper = TUPLE_HELPER.exec(fn.text);
      if (helper) return Number(helper[2]);
      if (Object.hasOwn(NAMED_TUPLE_HELPER, name)) return NAMED_TUPLE_HELPER[name];
      if (fn.type !== 'attribute' || fn.childForFieldName('object')?.text !== 'self') return undefined;
      const lengths = new Set(returnsOf(methodOf(expr, name)).map(next));
      const [only] = lengths;
      return lengths.size === 1 ? only : undefined;
    }
    default:
      return undefined;
  }
}

/** The method `name` of the class `node` stands in (through nested functions). */
function methodOf(node: Node, name: string): Node | undefined {
  let klass: Node | null = node.parent;
  while (klass && klass.type !== 'class_definition') klass = klass.parent;
  for (const child of klass?.childForFieldName('body')?.namedChildren ?? []) {
    const fn = child.type === 'decorated_definition' ? child.childForFieldName('definition') : child;
    if (fn?.type === 'function_definition' && fn.childForFieldName('name')?.text === name) return fn;
  }
  return undefined;
}

/** The values a function returns (not those of functions nested in it); none for a bare `return`. */
function returnsOf(fn: Node | undefined): Node[] {
  if (!fn) return [];
  const found: Node[] = [];
  const visit = (node: Node) => {
    for (const child of node.namedChildren) {
      if (child.type === 'function_definition' || child.type === 'class_definition' || child.type === 'lambda') continue;
      if (child.type === 'return_statement') {
        const value = child.namedChildren[0];
        found.push(value ?? child);
      } else visit(child);
    }
  };
  const body = fn.childForFieldName('body');
  if (body) visit(body);
  return found;
}
