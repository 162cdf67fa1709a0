// Reading the configs of an autotune decorator: how many there are, and which keys (block sizes,
// num_warps) differ between them. Follows names to module constants and config-building functions.
import type { Node } from 'web-tree-sitter';
import { callArguments, type Literal, literalValue, unparenthesize } from '../../syntax.js';
import type { RuleContext } from '../rule.js';
import { moduleValue, rootOf } from './module-scope.js';
import { conditionPolarity } from './triton.js';

export type Count = 'one' | 'several' | 'unknown';

/** How many configs an expression holds: a literal list, a comprehension, a name bound to one. */
export function configCount(raw: Node | undefined, ctx: RuleContext, depth = 0): Count {
  if (!raw || depth > 4) return 'unknown';
  switch (raw.type) {
    case 'list':
    case 'tuple': {
      if (raw.namedChildren.some((c) => c.type === 'list_splat')) return 'several';
      const n = raw.namedChildren.filter((c) => c.type !== 'comment').length;
      return n >= 2 ? 'several' : 'one';
    }
    case 'list_comprehension':
    case 'generator_expression':
      return 'several';
    case 'parenthesized_expression':
      return configCount(raw.namedChildren[0], ctx, depth + 1);
    case 'binary_operator': {
      const left = configCount(raw.childForFieldName('left') ?? undefined, ctx, depth + 1);
      const right = configCount(raw.childForFieldName('right') ?? undefined, ctx, depth + 1);
      if (left === 'unknown' || right === 'unknown') return 'unknown';
      return 'several';
    }
    case 'conditional_expression': {
      // `[fixed] if deterministic else configs`: the deterministic branch decides.
      const [body, , alternative] = raw.namedChildren;
      const branches = [body, alternative].filter((b): b is Node => !!b);
      const condition = raw.namedChildren[1];
      const polarity = condition ? conditionPolarity(condition) : undefined;
      const deterministic = polarity === undefined ? branches.find((b) => ctx.guardOf(b) === 'deterministic-branch') : polarity ? body : alternative;
      if (deterministic) return configCount(deterministic, ctx, depth + 1);
      const counts = branches.map((b) => configCount(b, ctx, depth + 1));
      return counts.includes('several') ? 'several' : counts.includes('unknown') ? 'unknown' : 'one';
    }
    case 'subscript': {
      // CONFIGS[:1], CONFIGS[0:1], [CONFIGS[0]] style picks.
      const index = raw.childForFieldName('subscript');
      if (index?.type === 'integer') return 'one';
      if (index?.type === 'slice') {
        const bounds = index.namedChildren.map((c) => literalValue(c));
        const [start, stop] = index.text.trim().startsWith(':') ? [0, bounds[0]] : bounds;
        if (typeof start === 'number' && typeof stop === 'number') return stop - start <= 1 ? 'one' : 'several';
      }
      return 'unknown';
    }
    case 'identifier': {
      const def = ctx.values.definition(raw);
      if (def) return def.unpacked ? 'unknown' : configCount(def.value, ctx, depth + 1);
      return configCount(moduleValue(raw), ctx, depth + 1);
    }
    case 'call': {
      // `get_configs()`: follow a module function; its deterministic branch may pick one config, as Mamba's does.
      const fn = raw.childForFieldName('function');
      const helper = fn?.type === 'identifier' ? moduleFunctions(raw).get(fn.text) : undefined;
      return helper ? returnedCount(helper, ctx, depth) : 'unknown';
    }
    default:
      return 'unknown';
  }
}

/** Module-level functions by name, for following a kernel into the jit helpers it calls. */
export function moduleFunctions(node: Node): Map<string, Node> {
  const root = rootOf(node);
  const byName = new Map<string, Node>();
  for (const statement of root.namedChildren) {
    const fn = statement.type === 'decorated_definition' ? statement.childForFieldName('definition') : statement;
    if (fn?.type !== 'function_definition') continue;
    const name = fn.childForFieldName('name')?.text;
    if (name) byName.set(name, fn);
  }
  return byName;
}

/**
 * The config keys (and `num_warps`, `num_stages`) whose value differs between the configs, read
 * from the `triton.Config(...)` calls of the configs expression or of the function building it;
 * undefined when no Config call can be read.
 */
export function varyingKeys(expr: Node | undefined, ctx: RuleContext): Set<string> | undefined {
  const sources = configSources(expr, ctx);
  if (sources.length === 0) return undefined;
  const calls = sources.flatMap((source) => source.descendantsOfType('call'));
  const configs = calls.filter(isConfigCall);
  // `gen_config(block_m=128, split_k=4)`: a module function that returns a Config of its parameters.
  const built = calls.flatMap((call) => {
    const fn = call.childForFieldName('function');
    const helper = fn?.type === 'identifier' ? moduleFunctions(call).get(fn.text) : undefined;
    return helper && !configs.includes(call) ? [{ call, helper }] : [];
  }).filter(({ helper }) => helper.descendantsOfType('call').some(isConfigCall));
  if (configs.length === 0 && built.length === 0) return undefined;
  // A loop variable takes the values of its iterable: a literal list gives them (`for w in [4]` is one
  // value); anything else counts as several.
  const loopValues = new Map<string, string[] | undefined>();
  for (const loop of sources.flatMap((source) => source.descendantsOfType(['for_in_clause', 'for_statement']))) {
    const left = loop.childForFieldName('left');
    const right = loop.childForFieldName('right');
    const targets = left?.descendantsOfType('identifier') ?? [];
    const perTarget = left && right ? productItems(left, right, ctx) : undefined;
    const items = left?.type === 'identifier' && right ? literalItems(right, ctx) : undefined;
    targets.forEach((id, i) => loopValues.set(id.text, loopValues.has(id.text) ? undefined : perTarget ? perTarget[i] : items));
  }
  const values = new Map<string, Set<string>>();
  const note = (key: string, value: Node | null | undefined) => {
    if (!value) return;
    let set = values.get(key);
    if (!set) values.set(key, (set = new Set()));
    const looped = value.type === 'identifier' && loopValues.has(value.text);
    if (!looped) set.add(value.text);
    else for (const item of loopValues.get(value.text) ?? [`${value.text} (1)`, `${value.text} (2)`]) set.add(item);
  };
  for (const config of configs) {
    const args = callArguments(config);
    const first = args.positional[0];
    for (const pair of first?.type === 'dictionary' ? first.namedChildren : []) {
      if (pair.type !== 'pair') continue;
      const key = literalValue(pair.childForFieldName('key'));
      if (typeof key === 'string') note(key, pair.childForFieldName('value'));
    }
    for (const [name, value] of args.keywords) if (name.startsWith('num_')) note(name, value);
  }
  for (const { call, helper } of built) for (const [key, value] of helperConfigValues(call, helper)) note(key, value);
  return new Set([...values].filter(([, seen]) => seen.size > 1).map(([key]) => key));
}

/**
 * The literal every `triton.Config` of a configs expression gives `key`, when they all give the
 * same one (`'SPLIT_K': 1` in each); undefined when a config leaves it out, computes it, or the
 * configs come from a helper whose arguments would have to be followed.
 */
export function fixedConfigValue(expr: Node | undefined, key: string, ctx: RuleContext): Literal | undefined {
  const sources = configSources(expr, ctx);
  const calls = sources.flatMap((source) => source.descendantsOfType('call'));
  const configs = calls.filter(isConfigCall);
  // Configs built from a helper's parameters (`gen_config(split_k=4)`) carry no literal: undefined below.
  if (configs.length === 0) return undefined;
  const seen = new Set<Literal | undefined>();
  for (const config of configs) {
    const first = callArguments(config).positional[0];
    const pair = first?.type === 'dictionary' ? first.namedChildren.find((p) => p.type === 'pair' && literalValue(p.childForFieldName('key')) === key) : undefined;
    seen.add(literalValue(pair?.childForFieldName('value')));
  }
  const [only] = seen;
  return seen.size === 1 ? only : undefined;
}

/** The configs argument of the `@triton.autotune(...)` (or `@...autotune(...)` wrapper) decorating a kernel. */
function autotuneConfigsOf(kernel: Node): Node | undefined {
  const decorated = kernel.parent?.type === 'decorated_definition' ? kernel.parent : undefined;
  for (const decorator of decorated?.namedChildren.filter((c) => c.type === 'decorator') ?? []) {
    const call = decorator.namedChildren[0];
    if (call?.type !== 'call' || !/(^|\.)\w*autotune$/.test(call.childForFieldName('function')?.text ?? '')) continue;
    const args = callArguments(call);
    return args.keywords.get('configs') ?? args.positional[0];
  }
  return undefined;
}

/**
 * A kernel branch no config of its autotune decorator runs: `if SPLIT_K == 1: tl.store(...) else:
 * tl.atomic_add(...)` where every config sets `SPLIT_K` to 1 leaves the atomic dead (a launch cannot
 * pass a meta-parameter the autotuner sets). `tunedBy`: the configs of an autotune applied to the
 * kernel later (`triton.autotune(configs=...)(kernel)`). Conditions read: the parameter alone,
 * `not` it, or compared with a literal.
 */
export function deadUnderConfigs(node: Node, kernel: Node, ctx: RuleContext, tunedBy?: Node): boolean {
  const configs = tunedBy ?? autotuneConfigsOf(kernel);
  if (!configs) return false;
  const holds = (condition: Node | null | undefined) => (condition ? conditionUnderConfigs(condition, configs, ctx) : undefined);
  let child = node;
  for (let parent = node.parent; parent && !parent.equals(kernel); child = parent, parent = parent.parent) {
    if (parent.type === 'if_statement' || parent.type === 'elif_clause') {
      const test = holds(parent.childForFieldName('condition'));
      if (child.equals(parent.childForFieldName('consequence') ?? parent) && test === false) return true;
      if ((child.type === 'else_clause' || child.type === 'elif_clause') && test === true) return true;
    }
  }
  return false;
}

function conditionUnderConfigs(raw: Node, configs: Node, ctx: RuleContext): boolean | undefined {
  const node = unparenthesize(raw);
  if (node.type === 'not_operator') {
    const inner = conditionUnderConfigs(node.childForFieldName('argument') ?? node, configs, ctx);
    return inner === undefined ? undefined : !inner;
  }
  if (node.type === 'identifier') {
    const value = fixedConfigValue(configs, node.text, ctx);
    return value === undefined ? undefined : !!value;
  }
  if (node.type !== 'comparison_operator' || node.namedChildCount !== 2) return undefined;
  const [left, right] = node.namedChildren;
  const op = node.children.find((c) => !c.isNamed)?.text;
  const value = left?.type === 'identifier' ? fixedConfigValue(configs, left.text, ctx) : undefined;
  const other = literalValue(right);
  if (typeof value !== 'number' || typeof other !== 'number') return undefined;
  switch (op) {
    case '==': return value === other;
    case '!=': return value !== other;
    case '<': return value < other;
    case '<=': return value <= other;
    case '>': return value > other;
    case '>=': return value >= other;
    default: return undefined;
  }
}

/** The items of a literal list or tuple, or of a name bound to one (`warps = [4]`). */
function literalItems(raw: Node, ctx: RuleContext): string[] | undefined {
  let node = raw;
  if (node.type === 'identifier') {
    const def = ctx.values.definition(node);
    if (!def || def.unpacked) return undefined;
    node = def.value;
  }
  if (node.type !== 'list' && node.type !== 'tuple') return undefined;
  return node.namedChildren.filter((c) => c.type !== 'comment').map((c) => c.text);
}

/**
 * `for m, w, s in itertools.product(block_m, warps, stages)`: each target takes the items of its own
 * factor (a one-item list is one value), so the keys a config table really varies can be told.
 */
function productItems(left: Node, right: Node, ctx: RuleContext): Array<string[] | undefined> | undefined {
  if (left.type !== 'pattern_list' && left.type !== 'tuple_pattern') return undefined;
  const fn = right.type === 'call' ? right.childForFieldName('function') : undefined;
  if (!fn || ctx.scope.resolveExpression(fn) !== 'itertools.product') return undefined;
  const targets = left.namedChildren;
  const factors = callArguments(right!).positional;
  if (targets.some((t) => t.type !== 'identifier') || factors.length !== targets.length) return undefined;
  return factors.map((f) => literalItems(f, ctx));
}

function isConfigCall(call: Node): boolean {
  return /(^|\.)Config$/.test(call.childForFieldName('function')?.text ?? '');
}

/**
 * What one call of a config-building helper puts in its Config: for each key (and `num_*`
 * keyword) the helper fills from a parameter, the argument the call passes for it, else the
 * parameter's default.
 */
function helperConfigValues(call: Node, helper: Node): Array<[string, Node]> {
  const params = (helper.childForFieldName('parameters')?.namedChildren ?? []).map((p) => ({
    name: (p.type === 'identifier' ? p : p.childForFieldName('name') ?? p.namedChildren[0])?.text,
    fallback: p.childForFieldName('value'),
  }));
  const args = callArguments(call);
  const passed = (name: string): Node | undefined => {
    const i = params.findIndex((p) => p.name === name);
    if (i < 0) return undefined;
    return args.keywords.get(name) ?? args.positional[i] ?? params[i]!.fallback ?? undefined;
  };
  const out: Array<[string, Node]> = [];
  for (const config of helper.descendantsOfType('call').filter(isConfigCall)) {
    const configArgs = callArguments(config);
    const first = configArgs.positional[0];
    const entries: Array<[string, Node | null]> = [];
    for (const pair of first?.type === 'dictionary' ? first.namedChildren : []) {
      const key = pair.type === 'pair' ? literalValue(pair.childForFieldName('key')) : undefined;
      if (typeof key === 'string') entries.push([key, pair.childForFieldName('value')]);
    }
    for (const [name, value] of configArgs.keywords) if (name.startsWith('num_')) entries.push([name, value]);
    for (const [key, value] of entries) {
      const arg = value?.type === 'identifier' ? passed(value.text) : value;
      if (arg) out.push([key, arg]);
    }
  }
  return out;
}

/**
 * The expressions or config-building functions whose Config calls a configs argument holds; a sum
 * of lists (`BASIC + IO_BOUND`) holds those of each.
 */
function configSources(expr: Node | undefined, ctx: RuleContext, depth = 0): Node[] {
  if (!expr || depth > 3) return [];
  if (expr.type === 'identifier') {
    const def = ctx.values.definition(expr);
    const value = def && !def.unpacked ? def.value : moduleValue(expr);
    return configSources(value, ctx, depth + 1);
  }
  if (expr.type === 'call') {
    const fn = expr.childForFieldName('function');
    const helper = fn?.type === 'identifier' ? moduleFunctions(expr).get(fn.text) : undefined;
    return helper ? [helper] : [];
  }
  if (expr.type === 'binary_operator' && expr.childForFieldName('operator')?.text === '+') {
    return [expr.childForFieldName('left'), expr.childForFieldName('right')].flatMap((side) => configSources(side ?? undefined, ctx, depth + 1));
  }
  return [expr];
}

/**
 * How many configs a module function returns: several when a return gives several (or a list
 * filled in a loop), one when the deterministic branch returns one (as Mamba's helpers do).
 */
function returnedCount(fn: Node, ctx: RuleContext, depth: number): Count {
  const returns = fn.descendantsOfType('return_statement').filter((r) => r.namedChildren[0]);
  if (returns.some((r) => ctx.guardOf(r) === 'deterministic-branch')) return 'one';
  const counts = returns.map((r) => {
    const value = r.namedChildren[0]!;
    if (value.type === 'identifier' && filledInLoop(fn, value.text)) return 'several';
    return configCount(value, ctx, depth + 1);
  });
  return counts.includes('several') ? 'several' : counts.includes('unknown') || counts.length === 0 ? 'unknown' : 'one';
}

/** `configs = []` then `configs.append(...)` / `.extend(...)` inside a loop of the function. */
function filledInLoop(fn: Node, name: string): boolean {
  return fn.descendantsOfType('for_statement').some((loop) => loop.text.includes(`${name}.append(`) || loop.text.includes(`${name}.extend(`));
}
