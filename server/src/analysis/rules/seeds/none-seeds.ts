// How a seed comes out None, or empty, on the path a plain run takes (BX302): a generator made with
// no seed (OS entropy), a seed parameter that defaults to None and is tested for it, an option or
// config entry left unset by default, and Hugging Face Datasets' seed=None. And `opt.seed` as the
// last assignment before a read sets it.
import type { Node } from 'web-tree-sitter';
import { callArguments, unparenthesize } from '../../syntax.js';
import type { RuleContext } from '../rule.js';
import { testsUnsetOption } from './cli-options.js';
import { literalThroughName, methodName, ownDescendants, parameterDefault, resolvedCallee, scopeOf } from './shared.js';

/** `opt.seed` read at `use`: the value of the last `opt.seed = ...` before it in the same scope. */
export function attributeValue(use: Node): Node | undefined {
  const scope = scopeOf(use);
  let found: Node | undefined;
  for (const assignment of ownDescendants(scope.type === 'module' ? scope : (scope.childForFieldName('body') ?? scope), 'assignment')) {
    if (assignment.startIndex >= use.startIndex) break;
    if (assignment.childForFieldName('left')?.text === use.text) found = assignment.childForFieldName('right') ?? undefined;
  }
  return found;
}

/** Generator constructors that draw their seed from OS entropy when given none. */
const ENTROPY_WHEN_EMPTY = new Set(['numpy.random.default_rng', 'numpy.random.RandomState', 'numpy.random.SeedSequence', 'random.Random']);

/**
 * `default_rng(*args)` with `args = (seed,) if seed is not None else ()`: the empty branch makes a
 * generator seeded from OS entropy. The branch it takes on a default run is the empty one when the
 * seed tested is unset there: read with `config.get("seed")` (no default), or a command-line option
 * declared without a default (cli-options.ts). Undefined when the splat cannot be empty.
 */
export function emptySeedSplat(call: Node, ctx: RuleContext): { fallback: boolean } | undefined {
  if (!ENTROPY_WHEN_EMPTY.has(resolvedCallee(call, ctx) ?? '')) return undefined;
  const list = call.childForFieldName('arguments');
  const splats = list?.namedChildren.filter((c) => c.type === 'list_splat') ?? [];
  if (splats.length !== 1 || list!.namedChildren.length !== 1) return undefined;
  const name = splats[0]!.namedChildren[0];
  const def = name?.type === 'identifier' ? ctx.values.definition(name) : undefined;
  const value = def && !def.unpacked ? unparenthesize(def.value) : undefined;
  if (value?.type !== 'conditional_expression') return undefined;
  const [body, condition, alternative] = value.namedChildren;
  const empty = (n: Node | undefined) => !!n && unparenthesize(n).type === 'tuple' && unparenthesize(n).namedChildCount === 0;
  if (!condition || !(empty(body) || empty(alternative))) return undefined;
  return { fallback: !unsetByDefault(condition, ctx) };
}

/** `p is None` / `p is not None` of a parameter `p` that defaults to None: its name, and which test. */
function parameterNoneTest(test: Node): { isNone: boolean } | undefined {
  const m = /^(\w+)\s+is\s+(not\s+)?None$/.exec(unparenthesize(test).text.trim());
  const name = m ? unparenthesize(test).namedChildren[0] : undefined;
  return name?.type === 'identifier' && parameterDefault(name)?.type === 'none' ? { isNone: !m![2] } : undefined;
}

/**
 * `default_rng(seed_i)` with `seed_i = None` bound in the branch a plain call takes: the `else` of
 * `if seed is not None and ...:` (or the body of `if seed is None:`) with `seed` a parameter that
 * defaults to None. Called without a seed, the generator seeds itself from OS entropy every run.
 */
export function noneSeedByDefault(call: Node, ctx: RuleContext): boolean {
  if (!ENTROPY_WHEN_EMPTY.has(resolvedCallee(call, ctx) ?? '')) return false;
  const args = callArguments(call);
  const seed = args.keywords.get('seed') ?? args.positional[0];
  if (seed?.type !== 'identifier' || args.positional.length > 1) return false;
  const def = ctx.values.definition(seed);
  if (!def || def.unpacked || def.value.type !== 'none') return false;
  let child: Node = def.value;
  for (let current = child.parent; current && current.type !== 'function_definition'; child = current, current = current.parent) {
    if (current.type !== 'if_statement') continue;
    const condition = current.childForFieldName('condition');
    if (!condition) return false;
    const inBody = !!current.childForFieldName('consequence')?.equals(child);
    const inElse = child.type === 'else_clause';
    if (inBody) return parameterNoneTest(condition)?.isNone === true;
    if (!inElse) return false;
    // The else of `a is not None and b is not None`: taken when any of them keeps its None default.
    const tests = unparenthesize(condition).type === 'boolean_operator' && /\band\b/.test(condition.text) ? unparenthesize(condition).namedChildren : [condition];
    return tests.some((t) => parameterNoneTest(t)?.isNone === false);
  }
  return false;
}

/** `x is not None` / `x is None` of a value that is None unless configured: `cfg.get("seed")` without a default, or an option without one. */
function unsetByDefault(condition: Node, ctx: RuleContext): boolean {
  const m = /^(.+?)\s+is\s+(not\s+)?None$/.exec(condition.text.trim());
  if (!m) return false;
  if (testsUnsetOption(condition, ctx)) return true;
  const tested = condition.namedChildren[0];
  let value: Node | undefined;
  if (tested?.type === 'attribute') value = ctx.values.selfAttributeValue(tested) ?? attributeValue(tested);
  else if (tested?.type === 'identifier') {
    const def = ctx.values.definition(tested);
    value = def && !def.unpacked ? def.value : undefined;
  }
  const expr = value && unparenthesize(value);
  if (expr?.type !== 'call') return false;
  const args = callArguments(expr);
  return methodName(expr, ctx) === 'get' && args.positional.length === 1 && args.keywords.size === 0 && !args.hasSplat;
}

/** Hugging Face Datasets methods whose `seed=None` means "pull fresh entropy from the OS" (their docs). */
const ENTROPY_ON_NONE = new Set(['shuffle', 'train_test_split']);

/** `ds.shuffle(seed=None)`: a literal None (or a name bound to one) given as the seed keyword. */
export function entropyOnNone(call: Node, seed: Node, ctx: RuleContext): boolean {
  if (!ENTROPY_ON_NONE.has(methodName(call, ctx) ?? '') || seed.parent?.type !== 'keyword_argument') return false;
  return literalThroughName(seed, ctx) === null;
}
