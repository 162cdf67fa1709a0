// The literal an argument has on the path a plain call or construction runs: `mode="bicubic"`
// written at the call, a name bound to a literal earlier in the function, a parameter's default
// (`def resize(x, mode="bilinear")`), or `self.mode` as `__init__` sets it, its parameter followed to
// the default (values.ts selfAttributeValue). A parameter without a default, or anything computed, is
// undefined: the caller decides, and the code cannot tell which path runs; except that a module-level
// function's parameter takes the literal all its calls in the file agree on, and `config.x` the
// default of the field `x` of the class `config` is annotated with (a config dataclass). A lookup
// with a fallback (`os.getenv("X", "0")`, `cfg.get("k", "v")`, `getattr(o, "k", False)`) has its
// fallback: nothing set it on the default path. A comparison or a conditional expression of such
// values, and a module-level constant read in a function, are followed too.
import type { Node } from 'web-tree-sitter';
import { argument, callArguments, enclosingFunction, Literal, literalValue, moduleValue, rootOf, unparenthesize } from './syntax.js';
import type { ValueHints } from './values.js';

/**
 * What the facts read: the file's values, and a note that an answer came from another function of
 * the file (a caller, a config class, a sibling method), which the language server's per-function
 * cache must not keep (RuleContext.readsBeyondFunction).
 */
export interface DefaultsContext {
  readonly values: ValueHints;
  readsBeyondFunction?(): void;
}

const MAX_DEPTH = 4;

export function defaultLiteral(node: Node | undefined, ctx: DefaultsContext, depth = 0): Literal | undefined {
  const values = ctx.values;
  if (!node || depth > MAX_DEPTH) return undefined;
  const expr = unparenthesize(node);
  const direct = literalValue(expr);
  if (direct !== undefined) return direct;
  const next = (n: Node | undefined | null) => defaultLiteral(n ?? undefined, ctx, depth + 1);
  if (expr.type === 'identifier') {
    const bound = values.definition(expr);
    if (bound) return bound.unpacked ? undefined : next(bound.value);
    const byDefault = values.parameterDefault(expr);
    if (byDefault) return next(byDefault);
    ctx.readsBeyondFunction?.();
    if (isParameter(expr)) return agreedByCallers(expr, next);
    // A name neither bound in its function nor a parameter: a module-level constant.
    return enclosingFunction(expr) ? next(moduleValue(expr)) : undefined;
  }
  if (expr.type === 'attribute') {
    const set = values.selfAttributeValue(expr);
    if (set) return next(set);
    ctx.readsBeyondFunction?.();
    const field = configFieldDefault(expr);
    return field ? next(field) : optionDefault(expr);
  }
  if (expr.type === 'call') return lookupFallback(expr, next);
  if (expr.type === 'comparison_operator') return comparedLiteral(expr, next);
  if (expr.type === 'not_operator') {
    const value = next(expr.childForFieldName('argument'));
    return value === undefined ? undefined : !value;
  }
  if (expr.type === 'conditional_expression') {
    // `a if cond else b`: the branch the condition picks on the default path.
    const [then, condition, otherwise] = expr.namedChildren;
    const test = next(condition);
    return test === undefined ? undefined : next(test ? then : otherwise);
  }
  return undefined;
}

/**
 * `args.lr` / `args.ds.attn_implementation` where the file's argparse parser declares the option
 * (`parser.add_argument("--ds.attn_implementation", default="flash_attention_2")`, or its `dest=`):
 * the option's default (False for `store_true`, True for `store_false`, else None). Two
 * declarations of one destination that disagree tell nothing.
 */
function optionDefault(attribute: Node): Literal | undefined {
  const text = attribute.text.replace(/\s+/g, '');
  let found: Literal | undefined;
  for (const [dest, value] of optionDefaults(rootOf(attribute))) {
    if (!text.endsWith(`.${dest}`)) continue;
    if (found !== undefined && found !== value) return undefined;
    found = value;
  }
  return found;
}

const optionsOfTree = new WeakMap<object, Array<[string, Literal]>>();
function optionDefaults(root: Node): Array<[string, Literal]> {
  const known = optionsOfTree.get(root.tree);
  if (known) return known;
  const options: Array<[string, Literal]> = [];
  if (root.text.includes('add_argument')) {
    for (const call of root.descendantsOfType('call')) {
      const fn = call.childForFieldName('function');
      if (fn?.type !== 'attribute' || fn.childForFieldName('attribute')?.text !== 'add_argument') continue;
      const args = callArguments(call);
      const flags = args.positional.map((a) => literalValue(a)).filter((f): f is string => typeof f === 'string' && f.startsWith('-'));
      const long = flags.find((f) => f.startsWith('--')) ?? flags[0];
      const dest = literalValue(args.keywords.get('dest'));
      const name = typeof dest === 'string' ? dest : long?.replace(/^-+/, '').replace(/-/g, '_');
      if (!name) continue;
      const action = literalValue(args.keywords.get('action'));
      const byDefault = args.keywords.get('default');
      const value = byDefault ? literalValue(byDefault) : action === 'store_true' ? false : action === 'store_false' ? true : null;
      if (value !== undefined) options.push([name, value]);
    }
  }
  optionsOfTree.set(root.tree, options);
  return options;
}

function isParameter(name: Node): boolean {
  const params = enclosingFunction(name)?.childForFieldName('parameters')?.namedChildren ?? [];
  return params.some((p) => (p.type === 'identifier' ? p : p.childForFieldName('name') ?? p.namedChildren[0])?.text === name.text);
}

/** Environment lookups whose second argument is the value when the variable is unset. */
const ENV_LOOKUPS = /^(os\.getenv|os\.environ\.get|environ\.get|getenv)$/;

/**
 * What a lookup gives when nothing set the key: `os.getenv(K, v)` / `os.environ.get(K, v)` (None
 * without `v`), `d.get(k, v)` (None without `v`), `getattr(o, "k", v)`. The default path is the one
 * where the user sets nothing.
 */
function lookupFallback(call: Node, valueOf: (n: Node | undefined) => Literal | undefined): Literal | undefined {
  const fn = call.childForFieldName('function');
  const args = callArguments(call);
  if (!fn || args.hasSplat) return undefined;
  const [first, second, third] = args.positional;
  if (fn.type === 'identifier' && fn.text === 'getattr') return third ? valueOf(third) : undefined;
  const isEnv = ENV_LOOKUPS.test(fn.text);
  const isGet = fn.type === 'attribute' && fn.childForFieldName('attribute')?.text === 'get';
  if ((!isEnv && !isGet) || typeof literalValue(first) !== 'string') return undefined;
  const fallback = second ?? args.keywords.get('default');
  return fallback ? valueOf(fallback) : null;
}

/** `a == b`, `a != b`, `a is None`, `a is not None` of two values known on the default path. */
function comparedLiteral(comparison: Node, valueOf: (n: Node | undefined) => Literal | undefined): Literal | undefined {
  const [left, right] = comparison.namedChildren;
  if (!left || !right || comparison.namedChildCount !== 2) return undefined;
  const operator = comparison.text.slice(left.endIndex - comparison.startIndex, right.startIndex - comparison.startIndex).replace(/\s+/g, ' ').trim();
  const a = valueOf(left);
  const b = valueOf(right);
  if (a === undefined || b === undefined) return undefined;
  if (operator === '==' || operator === 'is') return a === b;
  if (operator === '!=' || operator === 'is not') return a !== b;
  return undefined;
}

/**
 * A parameter without a default of a module-level function: the literal every call of the function
 * in its file passes there (`_resize(table, grids, self.mode)` with `self.mode` set to a literal),
 * when there is at least one call and they all agree.
 */
function agreedByCallers(parameter: Node, valueOf: (n: Node | undefined) => Literal | undefined): Literal | undefined {
  const fn = enclosingFunction(parameter);
  const holder = fn?.parent?.type === 'decorated_definition' ? fn.parent : fn;
  const name = fn?.childForFieldName('name')?.text;
  if (!fn || !name || holder?.parent?.type !== 'module') return undefined;
  const params = fn.childForFieldName('parameters')?.namedChildren ?? [];
  const position = params.findIndex((p) => (p.type === 'identifier' ? p : p.childForFieldName('name') ?? p.namedChildren[0])?.text === parameter.text);
  if (position < 0 || params.slice(0, position).some((p) => p.type === 'list_splat_pattern' || p.type === 'dictionary_splat_pattern')) return undefined;
  const calls = callsByName(rootOf(parameter)).get(name) ?? [];
  let agreed: Literal | undefined;
  for (const call of calls) {
    const args = callArguments(call);
    if (args.hasSplat) return undefined;
    const value = valueOf(argument(args, position, parameter.text));
    if (value === undefined || (agreed !== undefined && value !== agreed)) return undefined;
    agreed = value;
  }
  return agreed;
}

/** The file's calls of plain names, by name: read once per tree (the last one asked about). */
let callsOfTree: { root: Node; byName: Map<string, Node[]> } | undefined;
function callsByName(root: Node): Map<string, Node[]> {
  if (callsOfTree && callsOfTree.root.tree === root.tree) return callsOfTree.byName;
  const byName = new Map<string, Node[]>();
  for (const call of root.descendantsOfType('call')) {
    const fn = call.childForFieldName('function');
    if (fn?.type !== 'identifier') continue;
    const list = byName.get(fn.text);
    if (list) list.push(call);
    else byName.set(fn.text, [call]);
  }
  callsOfTree = { root, byName };
  return byName;
}

/**
 * `config.mode` where `config` is a parameter annotated with a class of the file (a config dataclass,
 * `def __init__(self, config: Config)`): the default its class body gives the field (`mode: str = "bicubic"`).
 * A class nested in the function's own class wins over one of the same name elsewhere in the file.
 */
function configFieldDefault(attribute: Node): Node | undefined {
  const object = attribute.childForFieldName('object');
  const field = attribute.childForFieldName('attribute')?.text;
  if (object?.type !== 'identifier' || !field) return undefined;
  const fn = enclosingFunction(attribute);
  const param = fn?.childForFieldName('parameters')?.namedChildren.find((p) => (p.type === 'typed_parameter' || p.type === 'typed_default_parameter') && (p.childForFieldName('name') ?? p.namedChildren[0])?.text === object.text);
  const typeName = param?.childForFieldName('type')?.text.split('.').pop()?.trim();
  if (!fn || !typeName || !/^\w+$/.test(typeName)) return undefined;
  const named = rootOf(attribute).descendantsOfType('class_definition').filter((c) => c.childForFieldName('name')?.text === typeName);
  let own: Node | null = fn.parent;
  while (own && own.type !== 'class_definition') own = own.parent;
  const nestedIn = (c: Node) => (c.parent?.type === 'decorated_definition' ? c.parent : c).parent?.parent;
  const klass = named.find((c) => own && nestedIn(c)?.equals(own)) ?? (named.length === 1 ? named[0] : undefined);
  for (const statement of klass?.childForFieldName('body')?.namedChildren ?? []) {
    const assignment = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
    if (assignment?.type === 'assignment' && assignment.childForFieldName('left')?.text === field) return assignment.childForFieldName('right') ?? undefined;
  }
  return undefined;
}

/** Helpers that build an n-tuple from one value: timm's `to_4tuple`, torch's `_pair` / `_quadruple`. */
const TUPLE_HELPER = /(^|\.)_?to_?([1-6])tuple$/;
const NAMED_TUPLE_HELPER: Record<string, number> = { _single: 1, _pair: 2, _triple: 3, _quadruple: 4 };

/**
 * How many elements the tuple or list an argument holds has on a plain call: a literal display, a
 * name or `self.x` followed as defaultLiteral does, an n-tuple helper (`to_4tuple(p)`, `_pair(k)`),
 * or a method of the same class whose returns all agree (`self._padding(x)` returning
 * `(left, right, top, bottom)`), a repetition `(p,) * 4` by a count defaultLiteral knows, and a
 * concatenation `(a, b) + (c, d)` of two such sequences. A splat or anything else is undefined.
 */
export function defaultLength(node: Node | undefined, ctx: DefaultsContext, depth = 0): number | undefined {
  const values = ctx.values;
  if (!node || depth > MAX_DEPTH) return undefined;
  const expr = unparenthesize(node);
  const next = (n: Node | undefined | null) => defaultLength(n ?? undefined, ctx, depth + 1);
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
      ctx.readsBeyondFunction?.();
      const lengths = new Set(returnsOf(methodOf(expr, name)).map(next));
      const [only] = lengths;
      return lengths.size === 1 ? only : undefined;
    }
    case 'binary_operator':
      return combinedLength(expr, next, ctx, depth);
    default:
      return undefined;
  }
}

/** `seq * n` (either side), or `a + b` of two sequences of known length. */
function combinedLength(expr: Node, next: (n: Node | undefined | null) => number | undefined, ctx: DefaultsContext, depth: number): number | undefined {
  const left = expr.childForFieldName('left');
  const right = expr.childForFieldName('right');
  const operator = expr.childForFieldName('operator')?.text;
  if (operator === '+') {
    const [a, b] = [next(left), next(right)];
    return a === undefined || b === undefined ? undefined : a + b;
  }
  if (operator !== '*') return undefined;
  for (const [seq, count] of [[left, right], [right, left]] as const) {
    const length = next(seq);
    const times = length === undefined ? undefined : defaultLiteral(count ?? undefined, ctx, depth + 1);
    if (length !== undefined && typeof times === 'number' && Number.isInteger(times) && times >= 0) return length * times;
  }
  return undefined;
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

/**
 * The switch that keeps code off the default path: the code stands in the body of `if flag:` or
 * `elif flag:` (or of `if not flag:` / its else) in its function, where `flag` is off by default (a parameter
 * defaulting to False or None, a name or `self.flag` set so): it runs only when a caller turns the
 * switch on. Returns the switch's text, or undefined.
 */
export function offByDefault(node: Node, ctx: DefaultsContext): string | undefined {
  let child = node;
  for (let parent = node.parent; parent && parent.type !== 'function_definition' && parent.type !== 'module'; child = parent, parent = parent.parent) {
    // `elif flag:` guards its own body as `if flag:` does: the body runs only when the flag is on.
    if (parent.type !== 'if_statement' && parent.type !== 'elif_clause') continue;
    const condition = parent.childForFieldName('condition');
    if (!condition) continue;
    const inBody = parent.childForFieldName('consequence')?.equals(child) ?? false;
    const inElse = parent.type === 'if_statement' && child.type === 'else_clause' && !parent.namedChildren.some((c) => c.type === 'elif_clause');
    const negated = condition.type === 'not_operator';
    const flag = negated ? condition.childForFieldName('argument') : condition;
    if (!flag || (flag.type !== 'identifier' && flag.type !== 'attribute')) continue;
    if ((inBody && !negated) || (inElse && negated)) {
      const value = defaultLiteral(flag, ctx);
      if ((value === false || value === null) && !turnedOnInFile(flag, ctx)) return flag.text;
    }
  }
  return undefined;
}

/** A parameter's name and position among a function's parameters, `self` left out for a method. */
function parameterSlot(fn: Node, name: string): number | undefined {
  const params = (fn.childForFieldName('parameters')?.namedChildren ?? []).map((p) => (p.type === 'identifier' ? p : p.childForFieldName('name') ?? p.namedChildren[0])?.text);
  const position = params.indexOf(name);
  if (position < 0) return undefined;
  return params[0] === 'self' || params[0] === 'cls' ? position - 1 : position;
}

/** The class a method is defined in. */
function classOfMethod(fn: Node): Node | undefined {
  const holder = fn.parent?.type === 'decorated_definition' ? fn.parent.parent : fn.parent;
  return holder?.type === 'block' && holder.parent?.type === 'class_definition' ? holder.parent : undefined;
}

/**
 * The switch is a parameter (or `self.flag` that `__init__` copies from one) and some call in the
 * file turns it on: `Block(dim, downsample=True)` for a layer whose `downsample` defaults to False,
 * a call passing it from a variable, or one spreading `**kwargs`. Its default is then no evidence
 * that the default run skips the code: the file's own model builds the layer with it on.
 */
function turnedOnInFile(flag: Node, ctx: DefaultsContext): boolean {
  let fn = enclosingFunction(flag);
  let name = flag.text;
  if (flag.type === 'attribute') {
    const object = flag.childForFieldName('object');
    const klass = fn && classOfMethod(fn);
    if (object?.text !== 'self' || !klass) return false;
    name = flag.childForFieldName('attribute')?.text ?? '';
    const init = methodOf(klass.childForFieldName('body') ?? klass, '__init__');
    const copied = init?.descendantsOfType('assignment').find((a) => a.childForFieldName('left')?.text === `self.${name}`)?.childForFieldName('right');
    if (!init || copied?.type !== 'identifier') return false;
    fn = init;
    name = copied.text;
  }
  if (!fn) return false;
  const slot = parameterSlot(fn, name);
  if (slot === undefined) return false;
  const fnName = fn.childForFieldName('name')?.text;
  const callee = fnName === '__init__' ? classOfMethod(fn)?.childForFieldName('name')?.text : fnName;
  if (!callee) return false;
  ctx.readsBeyondFunction?.();
  for (const call of rootOf(flag).descendantsOfType('call')) {
    const f = call.childForFieldName('function');
    const called = f?.type === 'identifier' ? f.text : f?.type === 'attribute' ? f.childForFieldName('attribute')?.text : undefined;
    if (called !== callee) continue;
    const args = callArguments(call);
    if (args.keywords.size === 0 && args.positional.length <= slot && !args.hasSplat) continue;
    if (args.hasSplat) return true;
    const passed = argument(args, slot, name);
    if (!passed) continue;
    const value = defaultLiteral(passed, ctx);
    if (value !== false && value !== null) return true;
  }
  return false;
}
