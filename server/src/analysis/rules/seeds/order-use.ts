// Where an ordered value ends up: sorted, counted, looped over, or stored under a name and used later.
import type { Node } from 'web-tree-sitter';
import type { RuleContext } from '../rule.js';
import { builtinName, enclosingClass, isSortingCall, outermost, ownDescendants, resolvedCallee, rootOf, scopeOf } from './file-scan.js';
/** Builtins that read an iterable without depending on its order. */
const ORDER_FREE = new Set(['len', 'set', 'frozenset', 'any', 'all', 'max', 'min', 'bool', 'sorted']);
/** Methods that read an iterable argument as a collection: set algebra, membership and count assertions. */
const ORDER_FREE_METHODS = new Set([
  'issubset', 'issuperset', 'isdisjoint', 'union', 'intersection', 'difference', 'symmetric_difference', 'update',
  'intersection_update', 'difference_update', 'assertIn', 'assertNotIn', 'assertCountEqual', 'assertSetEqual',
]);
/** Builtins that pass the order of an iterable on to their result. */
/** Wrappers that yield their iterable's items unchanged, in order, while drawing progress. */
const PROGRESS_BARS = new Set(['tqdm', 'track']);
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
  if (inMessage(start)) return { kind: 'order-free' };
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
      if (builtin === 'sum') return integerSum(call, ctx) ? { kind: 'order-free' } : { kind: 'summed', node: call };
      if (builtin && ORDER_FREE.has(builtin)) return { kind: 'order-free' };
      if (builtin && ORDER_KEEPING.has(builtin)) {
        if (builtin === 'enumerate' || builtin === 'zip') indexed = true;
        node = outermost(call);
        continue;
      }
      if (resolvedCallee(call, ctx) === 'collections.Counter') return { kind: 'order-free' };
      // `deque(it, maxlen=0)`: the "consume" recipe drains the iterable and keeps nothing.
      if (resolvedCallee(call, ctx) === 'collections.deque' && call.childForFieldName('arguments')?.namedChildren.some((a) => a.type === 'keyword_argument' && a.childForFieldName('name')?.text === 'maxlen' && a.childForFieldName('value')?.text === '0')) return { kind: 'order-free' };
      const fn = call.childForFieldName('function');
      const method = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text ?? '' : '';
      if (ORDER_FREE_METHODS.has(method)) return { kind: 'order-free' };
      // `"".join(names)` keeps the order in a string; what takes the string decides (`frozenset(...)`).
      // A progress bar (`tqdm(it)`, rich's `progress.track(it)`) hands its iterable on in order.
      if (method === 'join' || PROGRESS_BARS.has(method || (fn?.text ?? ''))) {
        node = outermost(call);
        continue;
      }
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

/** Logging and printing calls: their text is read by people, never by the computation. */
const MESSAGE_CALL = /^(print|(\w+\.)*(logger|logging|log|warnings)\.\w+|warn)$/;

/**
 * Is `node` only part of a message: an exception being raised, or the arguments of a print or a
 * logging call? An order that ends there never reaches a result.
 */
export function inMessage(node: Node): boolean {
  for (let current = node.parent; current; current = current.parent) {
    if (current.type === 'raise_statement') return true;
    if (current.type === 'call' && MESSAGE_CALL.test(current.childForFieldName('function')?.text ?? '')) return true;
    if (current.type.endsWith('_statement') || current.type === 'function_definition' || current.type === 'block') return false;
  }
  return false;
}

/** `dest.write(...)` on a file the loop body opens itself (`with open(path_of_item) as dest`): one file per item. */
export function writesItsOwnFile(call: Node, body: Node): boolean {
  const receiver = call.childForFieldName('function')?.childForFieldName('object');
  if (receiver?.type !== 'identifier') return false;
  return ownDescendants(body, 'as_pattern').some((alias) => alias.childForFieldName('alias')?.text === receiver.text);
}

/**
 * Does a loop depend on the order it visits things in? It does when it collects (`append`,
 * `extend`, `insert`, `+=`, `yield`, `d[k] = v` unless `keyedIsOrderFree`), stops at the first match
 * (`return`/`break`), or numbers the items (`enumerate`). Loops that only delete, copy or print do not.
 */
export function loopDependsOnOrder(loop: Node, indexed: boolean, keyedIsOrderFree = false, exactUpdate?: (update: Node) => boolean): boolean {
  if (indexed) return true;
  const body = loop.childForFieldName('body');
  if (!body) return false;
  const within = (type: string) => ownDescendants(body, type);
  if (within('yield').length > 0 || within('return_statement').length > 0 || within('break_statement').length > 0) return true;
  // `total += x` folds in loop order, unless the caller knows the update exact (integer sums), or
  // the body starts the value afresh for each item (`count = 0` before it): nothing carries across items.
  const assignments = within('assignment');
  const perItem = (update: Node) => {
    const name = update.childForFieldName('left');
    if (name?.type !== 'identifier') return false;
    return assignments.some((a) => a.startIndex < update.startIndex && a.childForFieldName('left')?.text === name.text && !mentionsName(a.childForFieldName('right')?.text ?? name.text, name.text));
  };
  if (within('augmented_assignment').some((update) => !exactUpdate?.(update) && !perItem(update))) return true;
  for (const call of within('call')) {
    const fn = call.childForFieldName('function');
    const name = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
    if (name === 'write' && writesItsOwnFile(call, body)) continue;
    if (name && ['append', 'extend', 'insert', 'appendleft', 'put', 'put_nowait', 'write', 'add_sample'].includes(name)) return true;
  }
  for (const assignment of assignments) {
    const left = assignment.childForFieldName('left');
    if (!keyedIsOrderFree && left?.type === 'subscript') return true;
    // A running value rebuilt from itself (`acc = acc + x`, `grad = [g + p for g, p in zip(grad, part)]`)
    // folds the items in loop order, like `+=` (not one the item started afresh: `im = load(p)`, then `im = im / 255`).
    const right = assignment.childForFieldName('right');
    if (left?.type === 'identifier' && right && mentionsName(right.text, left.text) && !perItem(assignment)) return true;
  }
  return false;
}

/** Does Python source `text` name the identifier `name` (not as an attribute, not inside a longer name)? */
function mentionsName(text: string, name: string): boolean {
  return new RegExp(`(?<![\\w.])${name}(?!\\w)`).test(text);
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

/**
 * A loop whose only collecting is `names.append(...)` (or `extend`) into lists that are then only
 * sorted, counted or reduced (`max(steps)`, `sorted(files)`, `set(ids)`): the order stops there.
 * With `keyedIsOrderFree`, a list whose items are later stored under a key they carry
 * (`for i, ref in results: out[i] = ref`, results put back by their index) ends the order too.
 */
export function collectsOnlyIntoOrderFree(loop: Node, ctx: RuleContext, keyedIsOrderFree = false): boolean {
  const body = loop.childForFieldName('body');
  if (!body || ownDescendants(body, 'return_statement').length || ownDescendants(body, 'break_statement').length || ownDescendants(body, 'yield').length) return false;
  const targets: Node[] = [];
  for (const c of ownDescendants(body, 'call')) {
    const fn = c.childForFieldName('function');
    const method = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
    if (method !== 'append' && method !== 'extend') continue;
    const target = fn!.childForFieldName('object');
    if (target?.type !== 'identifier') return false;
    targets.push(target);
  }
  if (targets.length === 0 || ownDescendants(body, 'augmented_assignment').length) return false;
  return targets.every((t) => sortedLater(t, loop, ctx) || orderedUses(t, loop, ctx, keyedIsOrderFree).length === 0);
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

/** Builtins and methods that return a Python int: lengths, counts, positions. */
const INT_BUILTINS = new Set(['len', 'int', 'ord']);
const INT_METHODS = new Set(['count', 'index', 'find', 'rfind', 'bit_length']);
const INT_OPERATORS = new Set(['+', '-', '*', '//', '%', '**', '<<', '>>', '&', '|', '^']);

/**
 * `sum(min(a.count(t), b.count(t)) for t in common)`: every term is a Python int (a count, a length,
 * a comparison, an int literal, and sums, products and min/max of them), and so is the start. An
 * integer sum is exact, so the order of the terms never reaches the result.
 */
function integerSum(call: Node, ctx: RuleContext): boolean {
  const args = call.childForFieldName('arguments');
  const generator = args?.type === 'generator_expression' ? args : args?.namedChildren.length === 1 && args.namedChildren[0]!.type === 'generator_expression' ? args.namedChildren[0]! : undefined;
  if (!generator) return false;
  return integerValued(generator.childForFieldName('body') ?? undefined, ctx);
}

function integerValued(node: Node | undefined, ctx: RuleContext): boolean {
  if (!node) return false;
  switch (node.type) {
    case 'integer':
    case 'true':
    case 'false':
    case 'comparison_operator':
    case 'not_operator':
      return true;
    case 'parenthesized_expression':
      return integerValued(node.namedChildren[0], ctx);
    case 'unary_operator':
      return integerValued(node.childForFieldName('argument') ?? undefined, ctx);
    case 'binary_operator':
      return INT_OPERATORS.has(node.childForFieldName('operator')?.text ?? '') && integerValued(node.childForFieldName('left') ?? undefined, ctx) && integerValued(node.childForFieldName('right') ?? undefined, ctx);
    case 'conditional_expression': {
      const [whenTrue, , whenFalse] = node.namedChildren;
      return integerValued(whenTrue, ctx) && integerValued(whenFalse, ctx);
    }
    case 'call': {
      const fn = node.childForFieldName('function');
      const args = node.childForFieldName('arguments')?.namedChildren ?? [];
      const builtin = builtinName(node, ctx);
      if (builtin && INT_BUILTINS.has(builtin)) return true;
      if (builtin === 'min' || builtin === 'max' || builtin === 'abs') return args.length > 0 && args.every((a) => integerValued(a, ctx));
      return fn?.type === 'attribute' && INT_METHODS.has(fn.childForFieldName('attribute')?.text ?? '');
    }
    default:
      return false;
  }
}
