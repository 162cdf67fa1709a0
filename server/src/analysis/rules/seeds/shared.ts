// What the 3xx (seeds and data order) and 6xx (environment) rules share: a once-per-file hook for
// rules that need the whole tree, builtin calls (`hash`, `set`, `sorted`: the engine does not
// dispatch them), the scope a node belongs to, and where an ordered value ends up (sorted, counted,
// looped over, stored under a name).
//
// The core dispatches rules by resolved callee and by assignment only. Rules that look at builtins
// or at statement order use `wholeFile`: the first dispatched call or assignment of a file runs
// the scan once for that file (RuleContext is created per analysed tree).
import type { Node } from 'web-tree-sitter';
import type { CallSite } from '../../calls.js';
import { callArguments, literalValue, unparenthesize } from '../../syntax.js';
import type { AssignmentSite, RuleContext } from '../rule.js';

const scanned = new WeakMap<RuleContext, Set<string>>();

/** True the first time `key` is asked for in the file `ctx` belongs to. */
export function firstInFile(ctx: RuleContext, key: string): boolean {
  let keys = scanned.get(ctx);
  if (!keys) scanned.set(ctx, (keys = new Set()));
  if (keys.has(key)) return false;
  keys.add(key);
  return true;
}

/**
 * Calls of a function or method whose name matches `names` (a regex alternation), found through the
 * source text: a regex over the text and one node lookup per match, instead of visiting every call.
 * `function`: `name(...)`; `method`: `x.name(...)`.
 */
export function callsByName(root: Node, ctx: RuleContext, names: string, kind: 'function' | 'method' | 'either'): Node[] {
  const pattern = new RegExp(`(?<![\\w])(${names})\\s*\\(`, 'g');
  const out: Node[] = [];
  for (const m of ctx.text.matchAll(pattern)) {
    const name = m[1]!;
    const id = root.descendantForIndex(m.index, m.index + name.length);
    if (id?.type !== 'identifier' || id.text !== name) continue; // inside a string or comment
    const parent = id.parent;
    if (kind !== 'method' && parent?.type === 'call' && parent.childForFieldName('function')?.equals(id)) out.push(parent);
    else if (kind !== 'function' && parent?.type === 'attribute' && parent.childForFieldName('attribute')?.equals(id)) {
      const call = parent.parent;
      if (call?.type === 'call' && call.childForFieldName('function')?.equals(parent)) out.push(call);
    }
  }
  return out;
}

/** Calls passing one of the keyword arguments `names` (`seed=...`), found through the source text. */
export function callsWithKeyword(root: Node, ctx: RuleContext, names: string): Node[] {
  const pattern = new RegExp(`(?<![\\w.])(${names})\\s*=(?!=)`, 'g');
  const out: Node[] = [];
  for (const m of ctx.text.matchAll(pattern)) {
    const id = root.descendantForIndex(m.index, m.index + m[1]!.length);
    const keyword = id?.parent;
    if (id?.type !== 'identifier' || keyword?.type !== 'keyword_argument' || !keyword.childForFieldName('name')?.equals(id)) continue;
    const call = keyword.parent?.parent;
    if (call?.type === 'call') out.push(call);
  }
  return out;
}

/** Per-file memo for facts several hits of one rule ask about. */
const memos = new WeakMap<RuleContext, Map<string, unknown>>();
export function memo<T>(ctx: RuleContext, key: string, compute: () => T): T {
  let map = memos.get(ctx);
  if (!map) memos.set(ctx, (map = new Map()));
  if (!map.has(key)) map.set(key, compute());
  return map.get(key) as T;
}

export function rootOf(node: Node): Node {
  let current = node;
  while (current.parent) current = current.parent;
  return current;
}

/** onCall/onAssignment hooks that run `scan` over the whole tree once per file. */
export function wholeFile(key: string, scan: (root: Node, ctx: RuleContext) => void) {
  const run = (node: Node, ctx: RuleContext) => {
    if (firstInFile(ctx, key)) scan(rootOf(node), ctx);
  };
  return {
    onCall: (call: CallSite, ctx: RuleContext) => run(call.node, ctx),
    onAssignment: (site: AssignmentSite, ctx: RuleContext) => run(site.node, ctx),
  };
}

const SCOPE_TYPES = new Set(['function_definition', 'lambda', 'class_definition', 'module']);

/** The function, lambda, class or module a node belongs to. */
export function scopeOf(node: Node): Node {
  let current = node.parent;
  while (current && !SCOPE_TYPES.has(current.type)) current = current.parent;
  return current ?? rootOf(node);
}

export function enclosingFunction(node: Node): Node | undefined {
  for (let current = node.parent; current; current = current.parent) {
    if (current.type === 'function_definition') return current;
    if (current.type === 'class_definition' || current.type === 'module') return undefined;
  }
  return undefined;
}

export function enclosingClass(node: Node): Node | undefined {
  for (let current = node.parent; current; current = current.parent) {
    if (current.type === 'class_definition') return current;
  }
  return undefined;
}

/** Descendants of `node` of one type, not looking inside nested functions, lambdas or classes. */
export function ownDescendants(node: Node, type: string): Node[] {
  const out: Node[] = [];
  const visit = (n: Node) => {
    for (const child of n.namedChildren) {
      if (child.type === type) out.push(child);
      if (child.type === 'function_definition' || child.type === 'class_definition' || child.type === 'lambda') continue;
      visit(child);
    }
  };
  visit(node);
  return out;
}

/**
 * Does the file bind `name` itself (def, class, assignment, parameter, loop variable)? Read from the
 * source text, erring towards "bound": a false yes only hides a builtin finding.
 */
function boundInFile(name: string, ctx: RuleContext): boolean {
  return memo(ctx, `bound:${name}`, () => {
    const n = name.replace(/[^\w]/g, '');
    return new RegExp(
      `\\b(def|class)\\s+${n}\\b|(?<![\\w.])${n}\\s*(=(?!=)|:[^=])|\\bdef\\s+\\w+\\s*\\((?:[^)]*?,)?\\s*\\*{0,2}${n}\\s*[,)=:]|\\bfor\\s+([\\w\\s,(]*[\\s,(])?${n}\\b[^\\n]*\\bin\\b|\\bas\\s+${n}\\b`,
    ).test(ctx.text);
  });
}

/** `hash` for a call of the builtin `hash(...)`, unless the file imports or defines that name. */
export function builtinName(call: Node, ctx: RuleContext): string | undefined {
  if (call.type !== 'call') return undefined;
  const fn = call.childForFieldName('function');
  if (fn?.type !== 'identifier') return undefined;
  if (ctx.scope.isImportedName(fn.text) || boundInFile(fn.text, ctx)) return undefined;
  return fn.text;
}

/** The canonical name a call resolves to through the imports (`numpy.random.seed`), if any. */
export function resolvedCallee(call: Node, ctx: RuleContext): string | undefined {
  if (call.type !== 'call') return undefined;
  const fn = call.childForFieldName('function');
  return fn ? ctx.scope.resolveExpression(fn) : undefined;
}

/** `x.name(...)` on something that is not an imported module: the method name. */
export function methodName(call: Node, ctx: RuleContext): string | undefined {
  if (call.type !== 'call') return undefined;
  const fn = call.childForFieldName('function');
  if (fn?.type !== 'attribute' || ctx.scope.resolveExpression(fn) !== undefined) return undefined;
  return fn.childForFieldName('attribute')?.text;
}

export function receiverOf(call: Node): Node | undefined {
  const fn = call.childForFieldName('function');
  return fn?.type === 'attribute' ? (fn.childForFieldName('object') ?? undefined) : undefined;
}

/** The node that stands for `node` in its parent: parentheses around it are looked through. */
export function outermost(node: Node): Node {
  let current = node;
  while (current.parent?.type === 'parenthesized_expression') current = current.parent;
  return current;
}

/** A call whose callee's last name says it sorts: `sorted`, `natsorted`, `os_sorted`, `humansorted`. */
export function isSortingCall(call: Node, ctx: RuleContext): boolean {
  if (call.type !== 'call') return false;
  const builtin = builtinName(call, ctx);
  if (builtin) return builtin === 'sorted';
  const resolved = resolvedCallee(call, ctx);
  return !!resolved && /(^|\.)(nat|os_|human|real)?sorted$/.test(resolved);
}

/** Builtins that read an iterable without depending on its order. */
const ORDER_FREE = new Set(['len', 'set', 'frozenset', 'any', 'all', 'max', 'min', 'bool', 'sorted']);
/** Methods that read an iterable argument as a collection: set algebra, membership and count assertions. */
const ORDER_FREE_METHODS = new Set([
  'issubset', 'issuperset', 'isdisjoint', 'union', 'intersection', 'difference', 'symmetric_difference', 'update',
  'intersection_update', 'difference_update', 'assertIn', 'assertNotIn', 'assertCountEqual', 'assertSetEqual',
]);
/** Builtins that pass the order of an iterable on to their result. */
const ORDER_KEEPING = new Set(['list', 'tuple', 'iter', 'reversed', 'map', 'filter', 'enumerate', 'zip']);

export type Consumer =
  | { kind: 'sorted' }
  | { kind: 'order-free' }
  /** Bound to a name (or `self.attr`): the caller decides by looking at the name's uses. */
  | { kind: 'assigned'; target: Node; statement: Node; indexed: boolean; keyed?: boolean }
  | { kind: 'loop'; loop: Node; indexed: boolean }
  /** Summed with `sum(...)`: order-free for integers, not for floats. */
  | { kind: 'summed'; node: Node }
  /** Anything else that keeps or reads the order: returned, indexed, joined, passed on. */
  | { kind: 'ordered'; node: Node; indexed?: boolean; keyed?: boolean };

/**
 * Follows an iterable value up through order-keeping wrappers (`list(...)`, comprehensions,
 * `enumerate`, `+`) to the place that consumes it.
 */
export function consumerOf(start: Node, ctx: RuleContext): Consumer {
  let node = outermost(start);
  let indexed = false;
  /** Passed through a dict comprehension: the order survives only as the dict's key order. */
  let keyed = false;
  for (let depth = 0; depth < 12; depth++) {
    const parent = node.parent;
    if (!parent) return { kind: 'ordered', node, indexed, keyed };
    // f(x) and f(x for x in y): the argument list, or a bare generator as the call's arguments.
    const call = parent.type === 'argument_list' ? parent.parent : parent.type === 'call' && parent.childForFieldName('arguments')?.equals(node) ? parent : undefined;
    if (call?.type === 'call') {
      if (isSortingCall(call, ctx)) return { kind: 'sorted' };
      const builtin = builtinName(call, ctx);
      if (builtin === 'sum') return { kind: 'summed', node: call };
      if (builtin && ORDER_FREE.has(builtin)) return { kind: 'order-free' };
      if (builtin && ORDER_KEEPING.has(builtin)) {
        if (builtin === 'enumerate' || builtin === 'zip') indexed = true;
        node = outermost(call);
        continue;
      }
      if (resolvedCallee(call, ctx) === 'collections.Counter') return { kind: 'order-free' };
      const fn = call.childForFieldName('function');
      if (fn?.type === 'attribute' && ORDER_FREE_METHODS.has(fn.childForFieldName('attribute')?.text ?? '')) return { kind: 'order-free' };
      return { kind: 'ordered', node, indexed, keyed };
    }
    switch (parent.type) {
      case 'for_in_clause': {
        if (!parent.childForFieldName('right')?.equals(node)) return { kind: 'ordered', node, indexed, keyed };
        const comprehension = parent.parent;
        if (!comprehension) return { kind: 'ordered', node, indexed, keyed };
        if (comprehension.type === 'set_comprehension') return { kind: 'order-free' };
        if (comprehension.type === 'dictionary_comprehension') keyed = true;
        node = outermost(comprehension);
        continue;
      }
      case 'for_statement':
        if (!parent.childForFieldName('right')?.equals(node)) return { kind: 'ordered', node, indexed, keyed };
        return { kind: 'loop', loop: parent, indexed };
      case 'assignment': {
        const left = parent.childForFieldName('left');
        if (!left || !parent.childForFieldName('right')?.equals(node)) return { kind: 'ordered', node, indexed, keyed };
        if (left.type === 'identifier' || left.type === 'attribute') return { kind: 'assigned', target: left, statement: parent, indexed, keyed };
        return { kind: 'ordered', node, indexed, keyed };
      }
      case 'comparison_operator': {
        // `name in listing`: membership does not depend on the order.
        const operators = parent.children.filter((c) => !c.isNamed).map((c) => c.text);
        if (operators.some((op) => op === 'in' || op === 'not in' || op === 'not')) return { kind: 'order-free' };
        return { kind: 'ordered', node, indexed, keyed };
      }
      case 'not_operator':
        return { kind: 'order-free' };
      case 'if_statement':
      case 'elif_clause':
      case 'while_statement':
        // `if os.listdir(d):` tests for emptiness.
        return parent.childForFieldName('condition')?.equals(node) ? { kind: 'order-free' } : { kind: 'ordered', node };
      case 'boolean_operator':
        // `a or b` passes one of its operands on: follow the whole expression.
        node = outermost(parent);
        continue;
      case 'conditional_expression': {
        const [body, condition, alternative] = parent.namedChildren;
        if (condition?.equals(node)) return { kind: 'order-free' };
        if (body?.equals(node) || alternative?.equals(node)) {
          node = outermost(parent);
          continue;
        }
        return { kind: 'ordered', node, indexed, keyed };
      }
      case 'binary_operator':
        if (parent.childForFieldName('operator')?.text === '+') {
          node = outermost(parent);
          continue;
        }
        return { kind: 'ordered', node, indexed, keyed };
      case 'expression_statement':
        return { kind: 'order-free' }; // evaluated and dropped
      default:
        return { kind: 'ordered', node, indexed, keyed };
    }
  }
  return { kind: 'ordered', node, indexed, keyed };
}

/**
 * Does a loop depend on the order it visits things in? It does when it collects (`append`,
 * `extend`, `insert`, `+=`, `yield`, `d[k] = v` unless `keyedIsOrderFree`), stops at the first match
 * (`return`/`break`), or numbers the items (`enumerate`). Loops that only delete, copy or print do not.
 */
export function loopDependsOnOrder(loop: Node, indexed: boolean, keyedIsOrderFree = false): boolean {
  if (indexed) return true;
  const body = loop.childForFieldName('body');
  if (!body) return false;
  const within = (type: string) => ownDescendants(body, type);
  if (within('yield').length > 0 || within('return_statement').length > 0 || within('break_statement').length > 0) return true;
  if (within('augmented_assignment').length > 0) return true;
  for (const call of within('call')) {
    const fn = call.childForFieldName('function');
    const name = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
    if (name && ['append', 'extend', 'insert', 'appendleft', 'put', 'put_nowait', 'write', 'add_sample'].includes(name)) return true;
  }
  for (const assignment of within('assignment')) {
    const left = assignment.childForFieldName('left');
    if (!keyedIsOrderFree && left?.type === 'subscript') return true;
    // A running value rebuilt from itself (`acc = acc + x`, `grad = [g + p for g, p in zip(grad, part)]`)
    // folds the items in loop order, like `+=`.
    const right = assignment.childForFieldName('right');
    if (left?.type === 'identifier' && right && new RegExp(`(?<![\\w.])${left.text}(?!\\w)`).test(right.text)) return true;
  }
  return false;
}

/**
 * Later uses of a name or `self.attr` bound at `statement`, in the same function (or class for
 * attributes). Occurrences are found in the source text and mapped back to nodes, which is much
 * cheaper than visiting every identifier of a large module.
 */
export function laterUses(target: Node, statement: Node, ctx: RuleContext): Node[] {
  const text = target.text;
  const isAttribute = target.type === 'attribute';
  const scope = isAttribute ? (enclosingClass(statement) ?? scopeOf(statement)) : scopeOf(statement);
  const root = rootOf(statement);
  const escaped = text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/\\\.|\s+/g, (m) => (m.trim() ? m : '\\s*'));
  const pattern = new RegExp(`(?<![\\w.])${escaped}(?!\\w)`, 'g');
  pattern.lastIndex = isAttribute ? scope.startIndex : statement.endIndex;
  const uses: Node[] = [];
  let rebound = Infinity;
  for (let m = pattern.exec(ctx.text); m && m.index < scope.endIndex; m = pattern.exec(ctx.text)) {
    if (m.index >= rebound) break;
    const candidate = root.descendantForIndex(m.index, m.index + m[0].length);
    if (!candidate || candidate.type !== target.type || candidate.text !== text) continue; // in a string or comment
    if (isAttribute && candidate.equals(target)) continue;
    // A later `name = ...` ends this value's life: uses after that statement see another value.
    const writer = outermost(candidate).parent;
    if (!isAttribute && writer?.type === 'assignment' && writer.childForFieldName('left')?.equals(outermost(candidate))) {
      rebound = writer.endIndex;
      continue;
    }
    if (!isAttribute && candidate.parent?.type === 'keyword_argument' && candidate.parent.childForFieldName('name')?.equals(candidate)) continue;
    uses.push(candidate);
  }
  return uses;
}

/** Is the value bound to `target` sorted later on (`x.sort()`, `x = sorted(x)`, `sorted(x)`)? */
export function sortedLater(target: Node, statement: Node, ctx: RuleContext): boolean {
  for (const use of laterUses(target, statement, ctx)) {
    const parent = outermost(use).parent;
    if (parent?.type === 'attribute' && parent.childForFieldName('attribute')?.text === 'sort' && parent.parent?.type === 'call') return true;
    const consumer = consumerOf(use, ctx);
    if (consumer.kind === 'sorted') return true;
    if (consumer.kind === 'order-free') continue;
  }
  return false;
}

/** Uses of the name that depend on its order (everything but membership, counting, sorting, truthiness). */
export function orderedUses(target: Node, statement: Node, ctx: RuleContext, keyedIsOrderFree = false): Node[] {
  const out: Node[] = [];
  for (const use of laterUses(target, statement, ctx)) {
    // Writes to the name (`files = ...` again) end the value's life; they are not uses.
    const parent = outermost(use).parent;
    if (parent?.type === 'assignment' && parent.childForFieldName('left')?.equals(outermost(use))) continue;
    if (parent?.type === 'attribute' && parent.childForFieldName('object')?.equals(outermost(use))) {
      const method = parent.childForFieldName('attribute')?.text;
      // files.sort() / files.count(x) / files.index(...) never depend on the incoming order... except index.
      if (method === 'sort' || method === 'count' || method === '__len__' || method === 'copy') continue;
      out.push(use);
      continue;
    }
    const consumer = consumerOf(use, ctx);
    if (consumer.kind === 'sorted' || consumer.kind === 'order-free') continue;
    if (consumer.kind === 'loop' && !loopDependsOnOrder(consumer.loop, consumer.indexed, keyedIsOrderFree)) continue;
    out.push(use);
  }
  return out;
}

/** Text of a string literal's own characters, interpolations dropped (`f"--x {y}"` → `--x `). */
export function stringText(node: Node): string | undefined {
  if (node.type === 'concatenated_string') {
    const parts = node.namedChildren.map((c) => stringText(c));
    return parts.every((p) => p !== undefined) ? parts.join(' ') : undefined;
  }
  if (node.type !== 'string') return undefined;
  return node.namedChildren
    .filter((c) => c.type === 'string_content' || c.type === 'interpolation')
    .map((c) => (c.type === 'string_content' ? c.text : ' '))
    .join('');
}

export type ElementKind = 'str' | 'other' | 'unknown';

const STR_METHODS = new Set([
  'lower', 'upper', 'strip', 'lstrip', 'rstrip', 'casefold', 'title', 'capitalize', 'replace', 'format', 'join',
  'removeprefix', 'removesuffix', 'decode', 'encode', 'zfill', 'ljust', 'rjust', 'center', 'swapcase', 'expandtabs',
  'hexdigest', 'read', 'readline', 'as_posix', 'strftime', 'translate', 'normalize',
]);
const STR_LIST_METHODS = new Set(['split', 'rsplit', 'splitlines', 'readlines', 'keys']);
const STR_LIST_CALLS = new Set(['re.findall', 're.split', 'os.listdir', 'glob.glob', 'shlex.split', 'string.ascii_letters', 'os.path.split']);
const STR_CALLS = new Set(['str', 'repr', 'chr', 'format', 'ascii', 'os.path.join', 'os.path.basename', 'os.path.dirname', 'os.path.splitext', 'os.fspath', 're.sub', 'json.dumps']);
const STR_TYPES = new Set(['str', 'bytes', 'typing.List[str]']);

/** Is an expression a string (or bytes)? 'other' for numbers and None; 'unknown' when it cannot tell. */
export function scalarKind(node: Node | undefined | null, ctx: RuleContext, depth = 0): ElementKind {
  if (!node || depth > 5) return 'unknown';
  const expr = unparenthesize(node);
  switch (expr.type) {
    case 'string':
    case 'concatenated_string':
      return 'str';
    case 'integer':
    case 'float':
    case 'true':
    case 'false':
    case 'none':
      return 'other';
    case 'unary_operator':
      return scalarKind(expr.childForFieldName('argument'), ctx, depth + 1);
    case 'binary_operator': {
      const left = scalarKind(expr.childForFieldName('left'), ctx, depth + 1);
      const right = scalarKind(expr.childForFieldName('right'), ctx, depth + 1);
      if (expr.childForFieldName('operator')?.text === '%' && left === 'str') return 'str';
      if (left === right) return left;
      return left === 'str' || right === 'str' ? 'str' : 'unknown';
    }
    case 'tuple': {
      const kinds = expr.namedChildren.map((c) => scalarKind(c, ctx, depth + 1));
      if (kinds.includes('str')) return 'str';
      return kinds.length > 0 && kinds.every((k) => k === 'other') ? 'other' : 'unknown';
    }
    case 'call': {
      const builtin = builtinName(expr, ctx);
      if (builtin === 'len' || builtin === 'int' || builtin === 'float' || builtin === 'round' || builtin === 'abs' || builtin === 'ord' || builtin === 'id') return 'other';
      if (builtin && STR_CALLS.has(builtin)) return 'str';
      const resolved = resolvedCallee(expr, ctx);
      if (resolved && STR_CALLS.has(resolved)) return 'str';
      const method = methodName(expr, ctx);
      if (method && STR_METHODS.has(method)) return 'str';
      return 'unknown';
    }
    case 'identifier':
      return nameKind(expr, ctx, depth, scalarKind);
    case 'attribute': {
      // p.name / p.stem / p.suffix of a pathlib path
      const name = expr.childForFieldName('attribute')?.text ?? '';
      return ['name', 'stem', 'suffix'].includes(name) && isPath(expr.childForFieldName('object'), ctx) ? 'str' : 'unknown';
    }
    default:
      return 'unknown';
  }
}

/** The kind of the elements an iterable yields. */
export function elementKind(node: Node | undefined | null, ctx: RuleContext, depth = 0): ElementKind {
  if (!node || depth > 5) return 'unknown';
  const expr = unparenthesize(node);
  switch (expr.type) {
    case 'string':
    case 'concatenated_string':
      return 'str'; // characters
    case 'list':
    case 'tuple':
    case 'set': {
      const items = expr.namedChildren.filter((c) => c.type !== 'comment');
      if (items.length === 0) return 'unknown';
      const kinds = items.map((c) => (c.type === 'list_splat' ? elementKind(c.namedChildren[0], ctx, depth + 1) : scalarKind(c, ctx, depth + 1)));
      if (kinds.every((k) => k === 'str')) return 'str';
      if (kinds.every((k) => k === 'other')) return 'other';
      return kinds.includes('str') ? 'str' : 'unknown';
    }
    case 'list_comprehension':
    case 'generator_expression':
    case 'set_comprehension': {
      const body = expr.childForFieldName('body');
      if (body?.type === 'identifier') {
        // {w for w in words}: the element is the loop variable, so ask about the iterable.
        const clause = expr.namedChildren.find((c) => c.type === 'for_in_clause');
        if (clause?.childForFieldName('left')?.text === body.text) return elementKind(clause.childForFieldName('right'), ctx, depth + 1);
      }
      return scalarKind(body, ctx, depth + 1);
    }
    case 'call': {
      const builtin = builtinName(expr, ctx);
      const args = callArguments(expr);
      if (builtin === 'range') return 'other';
      if (builtin && ['set', 'frozenset', 'list', 'tuple', 'sorted', 'reversed', 'iter'].includes(builtin)) return elementKind(args.positional[0], ctx, depth + 1);
      if (builtin && STR_CALLS.has(builtin)) return 'str';
      const resolved = resolvedCallee(expr, ctx);
      if (resolved && (STR_LIST_CALLS.has(resolved) || STR_CALLS.has(resolved))) return 'str';
      const method = methodName(expr, ctx);
      if (method && (STR_LIST_METHODS.has(method) || STR_METHODS.has(method))) return method === 'keys' ? 'unknown' : 'str';
      return 'unknown';
    }
    case 'identifier':
      return nameKind(expr, ctx, depth, elementKind);
    case 'binary_operator': {
      const op = expr.childForFieldName('operator')?.text;
      if (!op || !['|', '&', '-', '^', '+'].includes(op)) return 'unknown';
      const left = elementKind(expr.childForFieldName('left'), ctx, depth + 1);
      const right = elementKind(expr.childForFieldName('right'), ctx, depth + 1);
      if (left === 'str' || right === 'str') return 'str';
      return left === right ? left : 'unknown';
    }
    default:
      return 'unknown';
  }
}

function nameKind(id: Node, ctx: RuleContext, depth: number, kind: (n: Node, ctx: RuleContext, depth: number) => ElementKind): ElementKind {
  const def = ctx.values.definition(id);
  if (def && !def.unpacked) return kind(def.value, ctx, depth + 1);
  // A loop variable: `for p in paths` / `[f(p) for p in paths]` yields the elements of `paths`.
  if (kind === scalarKind) {
    for (let current = id.parent; current && current.type !== 'function_definition' && current.type !== 'module'; current = current.parent) {
      const clauses = current.type === 'for_statement' ? [current] : current.namedChildren.filter((c) => c.type === 'for_in_clause');
      for (const clause of clauses) {
        if (clause.childForFieldName('left')?.text === id.text) return elementKind(clause.childForFieldName('right'), ctx, depth + 1);
      }
    }
  }
  // A parameter annotated `str` / `bytes` (or `list[str]` for iterables).
  const annotation = parameterAnnotation(id);
  if (annotation) {
    const text = annotation.text.replace(/\s+/g, '');
    if (kind === scalarKind) return STR_TYPES.has(text) ? 'str' : /^(int|float|bool)$/.test(text) ? 'other' : 'unknown';
    if (text === 'str') return 'str'; // iterating a string yields strings
    return /^(typing\.)?(list|List|set|Set|Sequence|Iterable|frozenset|FrozenSet|tuple|Tuple)\[(str|bytes)(,\.\.\.)?\]$/.test(text) ? 'str' : 'unknown';
  }
  return 'unknown';
}

/** The type annotation of the parameter named like `id` in its enclosing function. */
export function parameterAnnotation(id: Node): Node | undefined {
  const fn = enclosingFunction(id);
  const parameters = fn?.childForFieldName('parameters');
  if (!parameters) return undefined;
  for (const p of parameters.namedChildren) {
    if (p.type !== 'typed_parameter' && p.type !== 'typed_default_parameter') continue;
    const name = p.childForFieldName('name') ?? p.namedChildren.find((c) => c.type === 'identifier');
    if (name?.text === id.text) return p.childForFieldName('type') ?? undefined;
  }
  return undefined;
}

/** The default value of the parameter named like `id` in its enclosing function. */
export function parameterDefault(id: Node): Node | undefined {
  const fn = enclosingFunction(id);
  const parameters = fn?.childForFieldName('parameters');
  if (!parameters) return undefined;
  for (const p of parameters.namedChildren) {
    if (p.type !== 'default_parameter' && p.type !== 'typed_default_parameter') continue;
    if (p.childForFieldName('name')?.text === id.text) return p.childForFieldName('value') ?? undefined;
  }
  return undefined;
}

/** `x = ...` then `x` read inside the same function: follows names to a literal value if it can. */
export function literalThroughName(node: Node | undefined, ctx: RuleContext): ReturnType<typeof literalValue> {
  if (!node) return undefined;
  const expr = unparenthesize(node);
  const direct = literalValue(expr);
  if (direct !== undefined) return direct;
  if (expr.type === 'identifier') {
    const def = ctx.values.definition(expr);
    if (def && !def.unpacked) return literalValue(unparenthesize(def.value));
  }
  return undefined;
}

const PATH_TYPES = /^pathlib\.(Path|PurePath|PosixPath|WindowsPath|PurePosixPath|PureWindowsPath)(\.(cwd|home))?$/;
const PATH_RETURNING = new Set(['resolve', 'absolute', 'expanduser', 'with_name', 'with_suffix', 'with_stem', 'joinpath', 'relative_to', 'parent']);

/** Is an expression a pathlib path: `Path(...)`, `root / "x"`, a name bound to one, `self.root`, a `: Path` parameter? */
export function isPath(node: Node | undefined | null, ctx: RuleContext, depth = 0): boolean {
  if (!node || depth > 5) return false;
  const expr = unparenthesize(node);
  switch (expr.type) {
    case 'call': {
      const resolved = resolvedCallee(expr, ctx);
      if (resolved) return PATH_TYPES.test(resolved);
      const method = methodName(expr, ctx);
      const fn = expr.childForFieldName('function');
      return !!method && PATH_RETURNING.has(method) && isPath(fn?.childForFieldName('object'), ctx, depth + 1);
    }
    case 'binary_operator':
      return expr.childForFieldName('operator')?.text === '/' && isPath(expr.childForFieldName('left'), ctx, depth + 1);
    case 'attribute': {
      const name = expr.childForFieldName('attribute')?.text;
      const object = expr.childForFieldName('object');
      if (name === 'parent') return isPath(object, ctx, depth + 1);
      // self.root = Path(root) somewhere in the class.
      if (object?.type === 'identifier' && object.text === 'self') {
        const cls = enclosingClass(expr);
        for (const assignment of cls?.descendantsOfType('assignment') ?? []) {
          if (assignment.childForFieldName('left')?.text === expr.text && isPath(assignment.childForFieldName('right'), ctx, depth + 1)) return true;
        }
      }
      return false;
    }
    case 'identifier': {
      const def = ctx.values.definition(expr);
      if (def) return !def.unpacked && isPath(def.value, ctx, depth + 1);
      const annotation = parameterAnnotation(expr);
      if (annotation) return /^(pathlib\.)?(Path|PurePath|PosixPath)$/.test(annotation.text.trim());
      // for sub in root.iterdir(): sub.glob(...)
      for (let current = expr.parent; current; current = current.parent) {
        if (current.type === 'for_statement' && current.childForFieldName('left')?.text === expr.text) {
          const right = current.childForFieldName('right');
          const fn = right?.type === 'call' ? right.childForFieldName('function') : undefined;
          const method = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
          return !!method && ['glob', 'rglob', 'iterdir'].includes(method) && isPath(fn?.childForFieldName('object'), ctx, depth + 1);
        }
        if (current.type === 'function_definition') break;
      }
      return false;
    }
    default:
      return false;
  }
}

/** Seeders that seed torch's global generator (and usually random/NumPy with it). */
export const TORCH_SEEDERS = new Set([
  'torch.manual_seed', 'torch.random.manual_seed',
  'lightning.seed_everything', 'lightning.pytorch.seed_everything', 'pytorch_lightning.seed_everything',
  'lightning.fabric.seed_everything', 'lightning_fabric.seed_everything', 'lightning.fabric.utilities.seed.seed_everything',
  'lightning_fabric.utilities.seed.seed_everything', 'lightning.pytorch.utilities.seed.seed_everything',
  'pytorch_lightning.utilities.seed.seed_everything',
  'transformers.set_seed', 'transformers.trainer_utils.set_seed', 'transformers.enable_full_determinism',
  'transformers.trainer_utils.enable_full_determinism',
  'accelerate.utils.set_seed', 'accelerate.utils.random.set_seed',
  'megatron.training.initialize_megatron', 'megatron.training.initialize.initialize_megatron',
  'megatron.training.pretrain', 'megatron.training.training.pretrain', 'megatron.training.initialize._set_random_seed',
  'torchtitan.distributed.utils.set_determinism', 'composer.utils.reproducibility.seed_all', 'composer.utils.seed_all',
  'ignite.utils.manual_seed',
]);

/** Trainer classes that seed torch in their constructor (transformers' Trainer calls set_seed(args.seed)). */
export const SEEDING_TRAINERS = /^(transformers(\.trainer)?\.(Trainer|Seq2SeqTrainer)|trl(\.\w+)*\.\w*Trainer)$/;

/** Modules whose seed functions never touch torch's generator. */
const NON_TORCH_SEED_MODULES = new Set(['random', 'numpy', 'tensorflow', 'jax', 'cupy', 'os', 'sys', 'sklearn', 'torch']);

/** A helper named like a seeding function: set_seed, seed_everything, seed_all, fix_seed, setup_seed... */
export const SEED_HELPER_NAME = /^_?(set|fix|setup|init|seed|reset|make)?_?(random|global|all|torch|rng)?_?seeds?(_everything|_all|_torch|_rng|_random|_worker|_everywhere)?$/i;

/**
 * Does the file seed torch's global generator somewhere? Imported helpers named like seed functions
 * from modules it cannot see count (the check is per file); a helper defined in the file counts only
 * if its body seeds torch.
 */
export function seedsTorch(root: Node, ctx: RuleContext): { seeded: boolean; helperWithoutTorch?: string } {
  const defs = new Map<string, Node>();
  for (const def of root.descendantsOfType('function_definition')) {
    const name = def.childForFieldName('name')?.text;
    if (name && !defs.has(name)) defs.set(name, def);
  }
  let helperWithoutTorch: string | undefined;
  const visiting = new Set<string>();
  const seedsIn = (node: Node, depth: number): boolean => {
    for (const call of node.descendantsOfType('call')) {
      const resolved = resolvedCallee(call, ctx);
      if (resolved !== undefined) {
        if (TORCH_SEEDERS.has(resolved) || SEEDING_TRAINERS.test(resolved)) return true;
        const last = resolved.slice(resolved.lastIndexOf('.') + 1);
        const rootModule = resolved.split('.')[0]!;
        if (/seed/i.test(last) && !NON_TORCH_SEED_MODULES.has(rootModule) && !resolved.startsWith('lightning') && !resolved.startsWith('pytorch_lightning')) return true;
        continue;
      }
      const fn = call.childForFieldName('function');
      if (fn?.type === 'identifier') {
        const def = defs.get(fn.text);
        if (def) {
          if (depth < 4 && !visiting.has(fn.text)) {
            visiting.add(fn.text);
            const inner = seedsIn(def.childForFieldName('body') ?? def, depth + 1);
            visiting.delete(fn.text);
            if (inner) return true;
            if (SEED_HELPER_NAME.test(fn.text)) helperWithoutTorch ??= fn.text;
          }
        } else if (!ctx.scope.isImportedName(fn.text) && SEED_HELPER_NAME.test(fn.text)) {
          return true; // star import or a name from elsewhere: assume it seeds
        }
      } else if (fn?.type === 'attribute') {
        const method = fn.childForFieldName('attribute')?.text ?? '';
        if (method === 'seed_everything' || method === 'set_seed' || method === 'seed_all') {
          const methodDef = defs.get(method);
          if (!methodDef) return true; // fabric.seed_everything(...), self.set_seed(...) defined elsewhere
          if (depth < 4 && !visiting.has(method)) {
            visiting.add(method);
            const inner = seedsIn(methodDef.childForFieldName('body') ?? methodDef, depth + 1);
            visiting.delete(method);
            if (inner) return true;
          }
        }
      }
    }
    return false;
  };
  const seeded = seedsIn(root, 0);
  return { seeded, helperWithoutTorch: seeded ? undefined : helperWithoutTorch };
}
