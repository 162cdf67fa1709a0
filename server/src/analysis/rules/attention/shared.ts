// Helpers shared by the attention rules: environment variables set from Python (the forms BX206
// reads) and what a `deterministic=` style keyword argument says.
import type { Node } from 'web-tree-sitter';
import type { CallSite } from '../../calls.js';
import { callArguments, enclosingFunction, literalValue, Literal, unparenthesize } from '../../syntax.js';
import { formatSlowdown } from '../cost.js';
import type { AssignmentSite, RuleContext } from '../rule.js';
import { defaultLiteral } from '../../defaults.js';
import { ENV_CALLS, envWriteOfAssignment as anyEnvWriteOfAssignment, envWritesOfCall as anyEnvWritesOfCall } from '../../env.js';

export { ENV_CALLS };

/**
 * scaled_dot_product_attention forward + backward under deterministic mode over the default (bf16,
 * (4, 16, 1024, 64), H200, torch 2.11): BX504's facts claim them, and every cost the attention rules
 * quote is written from them.
 */
export const SDPA_SLOWDOWN = { flash: 1.831, flashCausal: 1.089, efficient: 1.668, efficientCausal: 1.927, math: 1.057 };

/** "1.1× to 1.8×": the range of two measured slowdowns. */
export function slowdownRange(a: number, b: number): string {
  return `${formatSlowdown(Math.min(a, b))} to ${formatSlowdown(Math.max(a, b))}`;
}

export { moduleValue, rootOf } from '../kernels/module-scope.js';


/** One write of a given variable to the process environment, with a value. */
export interface EnvWrite {
  value: Node;
  /** The statement or call to report on. */
  anchor: Node;
}

/** `os.environ["NAME"] = value` for one NAME. */
export function envWriteOfAssignment(site: AssignmentSite, ctx: RuleContext, name: string): EnvWrite | undefined {
  const write = anyEnvWriteOfAssignment(site, ctx);
  return write?.name === name && write.value ? { value: write.value, anchor: write.node } : undefined;
}

/** `os.environ.setdefault(NAME, v)`, `os.putenv(NAME, v)`, `os.environ.update({NAME: v})`, `update(NAME=v)`. */
export function envWritesOfCall(call: CallSite, name: string): EnvWrite[] {
  return anyEnvWritesOfCall(call).flatMap((w) => (w.name === name && w.value ? [{ value: w.value, anchor: w.node }] : []));
}

/** Every write of `name` to the environment anywhere in the file, with its literal value if any. */
export function envWritesInFile(root: Node, ctx: RuleContext, name: string): Array<Literal | undefined> {
  if (!ctx.text.includes(name)) return [];
  const values: Array<Literal | undefined> = [];
  for (const node of root.descendantsOfType('assignment')) {
    const left = node.childForFieldName('left');
    const right = node.childForFieldName('right');
    if (!left || !right) continue;
    const write = envWriteOfAssignment({ node, left, right, target: undefined }, ctx, name);
    if (write) values.push(literalValue(write.value));
  }
  for (const node of root.descendantsOfType('call')) {
    const fn = node.childForFieldName('function');
    const callee = fn ? ctx.scope.resolveExpression(fn) : undefined;
    if (!callee || !ENV_CALLS.includes(callee)) continue;
    const site: CallSite = { node, callee, anchor: { start: node, end: node }, args: callArguments(node) };
    for (const write of envWritesOfCall(site, name)) values.push(literalValue(write.value));
  }
  return values;
}

/**
 * What a `deterministic=` style argument says: 'on' (literal True, or a value forwarded from
 * configuration, which the caller chose), 'off' (literal False/None, or absent, or a value that is
 * False on the default path: a parameter or `self.x` attribute whose default is False, an
 * environment lookup whose fallback is off, `os.getenv("X", "0") == "1"`; defaults.ts), 'unknown'
 * (passed through **kwargs, or more positional arguments than `firstPosition`, the earliest
 * position the flag has had in any version). A `**opts` dict the function fills with the key
 * (`opts["deterministic"] = v`, `opts.update({"deterministic": v})`) passes that value.
 */
export function flagState(call: CallSite, name: string, ctx: RuleContext, firstPosition?: number): 'on' | 'off' | 'unknown' {
  const node = call.args.keywords.get(name) ?? (call.args.hasSplat ? splatValue(call.node, name) : undefined);
  if (!node) {
    if (call.args.hasSplat && splatsMayPass(call.node, name, ctx)) return 'unknown';
    if (firstPosition !== undefined && call.args.positional.length > firstPosition) return 'unknown';
    return 'off';
  }
  const value = defaultLiteral(node, ctx);
  if (value === undefined) return 'on';
  return value === true || value === 1 ? 'on' : 'off';
}

/**
 * The value a `**d` splat of the call passes for keyword `name`: the last write of that key into
 * `d` before the call in its function (`d = {"name": v}`, `d = dict(name=v)`, `d["name"] = v`,
 * `d.update({"name": v})`, `d.update(name=v)`).
 */
function splatValue(call: Node, name: string): Node | undefined {
  const args = call.childForFieldName('arguments')?.namedChildren ?? [];
  const dicts = new Set(args.flatMap((a) => (a.type === 'dictionary_splat' && a.namedChildren[0]?.type === 'identifier' ? [a.namedChildren[0].text] : [])));
  if (dicts.size === 0) return undefined;
  const scope = enclosingFunction(call) ?? call.tree.rootNode;
  const fromDict = (dict: Node | null | undefined): Node | undefined => {
    if (dict?.type === 'dictionary') {
      const pair = dict.namedChildren.find((p) => p.type === 'pair' && literalValue(p.childForFieldName('key')) === name);
      return pair?.childForFieldName('value') ?? undefined;
    }
    if (dict?.type === 'call' && dict.childForFieldName('function')?.text === 'dict') return callArguments(dict).keywords.get(name);
    return undefined;
  };
  let found: Node | undefined;
  let at = -1;
  const take = (value: Node | undefined, where: Node) => {
    if (value && where.startIndex < call.startIndex && where.startIndex > at) {
      found = value;
      at = where.startIndex;
    }
  };
  for (const assignment of scope.descendantsOfType('assignment')) {
    const left = assignment.childForFieldName('left');
    const right = assignment.childForFieldName('right');
    if (left?.type === 'identifier' && dicts.has(left.text)) take(fromDict(right), assignment);
    if (left?.type === 'subscript' && dicts.has(left.childForFieldName('value')?.text ?? '') && literalValue(left.childForFieldName('subscript')) === name) take(right ?? undefined, assignment);
  }
  for (const update of scope.descendantsOfType('call')) {
    const fn = update.childForFieldName('function');
    if (fn?.type !== 'attribute' || fn.childForFieldName('attribute')?.text !== 'update' || !dicts.has(fn.childForFieldName('object')?.text ?? '')) continue;
    const updateArgs = callArguments(update);
    take(updateArgs.keywords.get(name) ?? fromDict(updateArgs.positional[0]), update);
  }
  return found;
}

/**
 * May the call's `*args` / `**kwargs` pass keyword `name`? Not when every splat is `**opts` of a
 * dict built in the function from literal keys (`opts = {}`, `opts["window_size"] = w`) none of
 * which is `name`, and never updated or passed elsewhere to be filled.
 */
function splatsMayPass(call: Node, name: string, ctx: RuleContext): boolean {
  const splats = call.childForFieldName('arguments')?.namedChildren.filter((c) => c.type === 'list_splat' || c.type === 'dictionary_splat') ?? [];
  return splats.some((splat) => {
    const dict = splat.namedChildren[0];
    if (splat.type !== 'dictionary_splat' || dict?.type !== 'identifier') return true;
    const def = ctx.values.definition(dict);
    if (!def || def.unpacked || !literalDict(def.value, name)) return true;
    let fn: Node | null = call.parent;
    while (fn && fn.type !== 'function_definition') fn = fn.parent;
    for (const use of fn?.descendantsOfType('identifier') ?? []) {
      if (use.text !== dict.text || use.equals(dict) || use.equals(def.value.parent?.childForFieldName('left') ?? use)) continue;
      const parent = use.parent;
      // `opts["key"] = v`: a literal key other than the flag.
      if (parent?.type === 'subscript' && parent.childForFieldName('value')?.equals(use)) {
        const key = literalValue(parent.childForFieldName('subscript'));
        const assigned = parent.parent?.type === 'assignment' && parent.parent.childForFieldName('left')?.equals(parent);
        if (typeof key === 'string' && key !== name && assigned) continue;
        if (!assigned) continue;
      }
      if (parent?.type === 'dictionary_splat') continue;
      return true;
    }
    return false;
  });
}

/** A dict literal whose keys are all literal strings other than `name`, or a choice of two such (`{"w": x} if w else {}`). */
function literalDict(value: Node, name: string): boolean {
  const expr = unparenthesize(value);
  if (expr.type === 'conditional_expression') {
    const [then, , otherwise] = expr.namedChildren;
    return !!then && !!otherwise && literalDict(then, name) && literalDict(otherwise, name);
  }
  return expr.type === 'dictionary' && literalKeys(expr, name);
}

/** A dict literal whose keys are all literal strings other than `name`. */
function literalKeys(dict: Node, name: string): boolean {
  return dict.namedChildren.every((pair) => {
    if (pair.type === 'comment') return true;
    const key = pair.type === 'pair' ? literalValue(pair.childForFieldName('key')) : undefined;
    return typeof key === 'string' && key !== name;
  });
}

/**
 * `cfg = AutoConfig.from_pretrained(name, attn_implementation=...)` whose only uses in its function
 * read attributes (`getattr(cfg, "quantization_config", None)`, `cfg.num_layers`): a config loaded
 * to be looked at, which builds no model.
 */
function onlyInspectedConfig(call: Node | null | undefined): boolean {
  if (call?.type !== 'call' || !/Config(\.from_pretrained)?$/.test(call.childForFieldName('function')?.text ?? '')) return false;
  const assignment = call.parent?.type === 'assignment' ? call.parent : undefined;
  const target = assignment?.childForFieldName('left');
  const fn = enclosingFunction(call);
  if (target?.type !== 'identifier' || !fn) return false;
  const uses = fn.descendantsOfType('identifier').filter((id) => id.text === target.text && id.startIndex > assignment!.endIndex);
  return uses.length > 0 && uses.every((use) => {
    const parent = use.parent;
    if (parent?.type === 'attribute' && parent.childForFieldName('object')?.equals(use)) return parent.parent?.type !== 'call' || !parent.parent.childForFieldName('function')?.equals(parent);
    const call = parent?.type === 'argument_list' ? parent.parent : undefined;
    return call?.childForFieldName('function')?.text === 'getattr' && parent!.namedChildren[0]?.equals(use);
  });
}

const SETS_IMPLEMENTATION = /^_?set_attn_impl(ementation)?$/;

/**
 * A name whose every later use in its function only describes it: inside an f-string, an element
 * of a tuple or list display, a comparison (`logged_attn_implementation` printed in a warning). A
 * value that is only shown never reaches a model.
 */
function onlyDescribed(target: Node | null): boolean {
  if (target?.type !== 'identifier') return false;
  const scope = enclosingFunction(target) ?? target.tree.rootNode;
  const uses = scope.descendantsOfType('identifier').filter((id) => id.text === target.text && id.startIndex > target.endIndex);
  return uses.length > 0 && uses.every((use) => {
    const parent = use.parent;
    if (parent?.type === 'tuple' || parent?.type === 'list' || parent?.type === 'set' || parent?.type === 'comparison_operator') return true;
    for (let up: Node | null = parent; up && up.type !== 'expression_statement' && up.type !== 'block'; up = up.parent) if (up.type === 'interpolation') return true;
    return false;
  });
}

/**
 * A model built for evaluation: an argument of its construction names an evaluation config
 * (`ds_config=strategy.get_ds_eval_config(...)`, `eval_config`). Reference, EMA and reward
 * models built so run forward only, so their attention backward never runs.
 */
function buildsEvalModel(call: Node | null | undefined): boolean {
  if (call?.type !== 'call') return false;
  return [...callArguments(call).keywords.values()].some((value) => /(^|[._])(get_)?(\w+_)?eval_config\b/.test(value.text));
}

/**
 * Settings of the attention implementation that forward a value instead of writing it:
 * `attn_implementation=args.attn_implementation`, `config._attn_implementation = impl`,
 * `impl = cfg.get("attn_implementation", ...)`, `{"attn_implementation": impl}`. The values, for
 * the rules to follow to the literal they have on the default path (defaults.ts).
 */
export function forwardedImplementations(root: Node): Node[] {
  const found: Node[] = [];
  const forwarded = (value: Node | null | undefined) => !!value && value.type !== 'string' && value.type !== 'concatenated_string' && literalValue(value) === undefined;
  for (const keyword of root.descendantsOfType('keyword_argument')) {
    const value = keyword.childForFieldName('value');
    const call = keyword.parent?.parent;
    if (keyword.childForFieldName('name')?.text !== 'attn_implementation' || !forwarded(value)) continue;
    if (onlyInspectedConfig(call) || buildsEvalModel(call)) continue;
    found.push(value!);
  }
  for (const assignment of root.descendantsOfType('assignment')) {
    const left = assignment.childForFieldName('left');
    const right = assignment.childForFieldName('right');
    if (!left || !/attn_implementation$/.test(left.text) || !forwarded(right) || onlyDescribed(left)) continue;
    found.push(right!);
  }
  for (const pair of root.descendantsOfType('pair')) {
    const value = pair.childForFieldName('value');
    if (literalValue(pair.childForFieldName('key')) === 'attn_implementation' && forwarded(value)) found.push(value!);
  }
  return found;
}

/** Is this string the value of a transformers attention-implementation setting? */
export function isImplementationSetting(string: Node, ctx: RuleContext): boolean {
  // `"sdpa" if args.deterministic else "flash_attention_2"`: the setting is the whole expression.
  let value = string;
  while (value.parent?.type === 'conditional_expression' || value.parent?.type === 'parenthesized_expression') {
    if (value.parent.type === 'conditional_expression' && value.parent.namedChildren[1]?.equals(value)) return false;
    value = value.parent;
  }
  const parent = value.parent;
  if (!parent) return false;
  const endsWithName = (n: Node | null | undefined) => !!n && /attn_implementation$/.test(n.text);
  switch (parent.type) {
    case 'keyword_argument': {
      const name = parent.childForFieldName('name')?.text;
      // Also a prefixed setting that is handed on to transformers (`sp_attn_implementation=` of a
      // sequence-parallel config).
      if (name && /^([a-z0-9]\w*_)?attn_implementation$/i.test(name)) return !onlyInspectedConfig(parent.parent?.parent);
      if (name !== 'default') return false;
      // parser.add_argument("--attn_implementation", default=...) / field(default=...)
      const call = parent.parent?.parent;
      const first = call?.childForFieldName('arguments')?.namedChildren[0];
      const flag = literalValue(first);
      if (typeof flag === 'string' && /attn[_-]implementation$/.test(flag)) return true;
      return call?.parent?.type === 'assignment' && endsWithName(call.parent.childForFieldName('left'));
    }
    case 'pair':
      return literalValue(parent.childForFieldName('key')) === 'attn_implementation';
    // def __init__(self, model, attn_implementation="flash_attention_2"): the default its callers get.
    case 'default_parameter':
    case 'typed_default_parameter':
      return endsWithName(parent.childForFieldName('name'));
    case 'assignment':
      return endsWithName(parent.childForFieldName('left')) && !onlyDescribed(parent.childForFieldName('left'));
    case 'argument_list': {
      // model.set_attn_implementation(...), or a project helper named so (`_set_attn_impl(config, ...)`).
      const fn = parent.parent?.childForFieldName('function');
      const last = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : fn?.text;
      return !!fn && SETS_IMPLEMENTATION.test(last ?? '') && ctx.scope.resolveExpression(fn) === undefined;
    }
    default:
      return false;
  }
}
