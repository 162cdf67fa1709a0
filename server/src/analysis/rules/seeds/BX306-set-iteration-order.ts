import type { Node } from 'web-tree-sitter';
import { callArguments, rangeOf, unparenthesize } from '../../syntax.js';
import type { Fix } from '../../types.js';
import { always, fitMessage, Rule, RuleContext } from '../rule.js';
import { builtinName, callsByName, Consumer, consumerOf, elementKind, ElementKind, laterUses, loopDependsOnOrder, outermost, sortedLater } from './shared.js';

const SET_OPERATORS = new Set(['|', '&', '-', '^']);

/** Is an expression a set: `set(...)`, `frozenset(...)`, `{a, b}`, `{x for ...}`, or set algebra on one? */
function isSetExpression(node: Node, ctx: RuleContext): boolean {
  const expr = unparenthesize(node);
  if (expr.type === 'set' || expr.type === 'set_comprehension') return true;
  if (expr.type === 'call') {
    const name = builtinName(expr, ctx);
    return name === 'set' || name === 'frozenset';
  }
  if (expr.type === 'binary_operator' && SET_OPERATORS.has(expr.childForFieldName('operator')?.text ?? '')) {
    return isSetExpression(expr.childForFieldName('left')!, ctx) || isSetExpression(expr.childForFieldName('right')!, ctx);
  }
  return false;
}

/** The elements' kind: a set of strings is ordered by salted hashes; numbers hash to themselves. */
function kindOfSet(node: Node, ctx: RuleContext): ElementKind {
  const expr = unparenthesize(node);
  if (expr.type === 'set' || expr.type === 'set_comprehension') return elementKind(expr, ctx);
  if (expr.type === 'call') {
    const [arg] = callArguments(expr).positional;
    return arg ? elementKind(arg, ctx) : 'other';
  }
  if (expr.type === 'binary_operator') {
    const left = kindOfSet(expr.childForFieldName('left')!, ctx);
    const right = kindOfSet(expr.childForFieldName('right')!, ctx);
    return left === 'str' || right === 'str' ? 'str' : left === right ? left : 'unknown';
  }
  if (expr.type === 'identifier') {
    const def = ctx.values.definition(expr);
    return def && !def.unpacked ? kindOfSet(def.value, ctx) : 'unknown';
  }
  return 'unknown';
}


/** Methods that read the order of an iterable argument into their result. */
const ORDER_READING_METHODS = new Set(['join', 'extend', 'writelines', 'extendleft']);

/** Calls whose arguments only end up in messages. */
const MESSAGE_CALLS = /^(print|warn|warning|info|debug|error|exception|critical|log|fail|assert\w*|\w*Error|\w*Exception|\w*Warning)$/;

/** Is the site part of a message (exception, assertion, log line, f-string) rather than data? */
function inMessage(node: Node): boolean {
  for (let current = node.parent; current; current = current.parent) {
    switch (current.type) {
      case 'raise_statement':
      case 'assert_statement':
      case 'interpolation':
        return true;
      case 'call': {
        const fn = current.childForFieldName('function');
        const name = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : fn?.text;
        if (name && MESSAGE_CALLS.test(name)) return true;
        break;
      }
      case 'function_definition':
      case 'class_definition':
      case 'module':
      case 'block':
        return false;
    }
  }
  return false;
}

/** Is `value` the set itself, possibly chosen by `a if c else b` / `a or b`? */
function passesThrough(value: Node, start: Node): boolean {
  const expr = unparenthesize(value);
  if (expr.equals(outermost(start)) || expr.equals(start)) return true;
  if (expr.type === 'conditional_expression' || expr.type === 'boolean_operator') {
    return expr.namedChildren.some((c) => passesThrough(c, start));
  }
  return false;
}

/**
 * Does this consumer read the set's iteration order into something that keeps it? For sets of
 * unknown element type only the strongest signs count: positions (`enumerate`, `zip`) or a list,
 * tuple or mapping built from the set and stored.
 */
function readsOrder(consumer: Consumer, start: Node, kind: ElementKind, ctx: RuleContext): boolean {
  // The set itself, also when chosen by `a if c else b` and passed on as a whole.
  const itself = (node: Node) => passesThrough(node, start);
  const strong = kind === 'str';
  switch (consumer.kind) {
    case 'sorted':
    case 'order-free':
      return false;
    case 'summed':
      return strong; // float sums depend on the order
    case 'loop':
      return consumer.indexed || (strong && loopDependsOnOrder(consumer.loop, false));
    case 'assigned': {
      // Storing the set itself keeps a set (also `set(x) if c else set()`); a dict keyed by the
      // elements is looked up, not iterated; a list, tuple or numbering freezes the order.
      if (consumer.indexed) return true;
      const value = consumer.statement.childForFieldName('right');
      return !!value && !passesThrough(value, start) && !consumer.keyed && !sortedLater(consumer.target, consumer.statement, ctx);
    }
    case 'ordered': {
      if (consumer.indexed) return true;
      if (consumer.keyed) return false;
      // Passing the set itself on (`f(labels)`, `return labels`) does not read its order here;
      // `", ".join(labels)` does. Wrapped in list(...) or a comprehension, the order is read.
      if (!itself(consumer.node)) return strong;
      const parent = consumer.node.parent;
      // [*labels] or f(*labels) read the order; {*labels, "x"} makes another set.
      if (parent?.type === 'list_splat') return strong && parent.parent?.type !== 'set';
      if (parent?.type === 'argument_list') {
        const fn = parent.parent?.childForFieldName('function');
        return strong && fn?.type === 'attribute' && ORDER_READING_METHODS.has(fn.childForFieldName('attribute')?.text ?? '');
      }
      return false;
    }
  }
}

function sortedFix(node: Node): Fix[] {
  const range = rangeOf(node);
  return [
    {
      title: 'Iterate in sorted order',
      safety: 'safe',
      edits: [
        { range: { start: range.start, end: range.start }, newText: 'sorted(' },
        { range: { start: range.end, end: range.end }, newText: ')' },
      ],
    },
  ];
}

function report(site: Node, kind: ElementKind, ctx: RuleContext): void {
  if (kind === 'other') return;
  const shown = site.text.length > 40 ? `${site.text.slice(0, 37)}...` : site.text;
  if (kind === 'str') {
    ctx.report({
      node: site,
      outcomes: always(
        'warning',
        fitMessage(`\`${shown}\` is a set of strings, whose order changes with every process's hash salt`, "This set of strings is iterated in an order that changes with every process's hash salt"),
        `Python salts string hashes afresh in every process (unless PYTHONHASHSEED is fixed before start-up), so the ids, vocabulary or list built from it come out in a different order each run. Iterate over \`sorted(${shown})\` instead.`,
      ),
      fixes: sortedFix(site),
    });
    return;
  }
  ctx.report({
    node: site,
    outcomes: always(
      'info',
      fitMessage(`The order of the set \`${shown}\` is kept here, and it can change run to run`, 'The order of a set is kept here, and it can change run to run'),
      'If its elements are strings (or objects hashed by identity), that order changes from run to run; bitexact cannot tell the element type. Use `sorted(...)` if they are strings.',
    ),
  });
}

/** A direct use of a set expression as an ordered iterable. */
function checkExpression(node: Node, ctx: RuleContext, seen: Set<number>): void {
  const consumer = consumerOf(node, ctx);
  let kind: ElementKind | undefined;
  const kindOf = () => (kind ??= kindOfSet(node, ctx));
  if (consumer.kind === 'assigned' && consumer.target.type === 'identifier' && outermost(node).parent?.type === 'assignment') {
    // `vocab = set(words)`: the set is stored as a set; its later uses are checked one by one.
    for (const use of laterUses(consumer.target, consumer.statement, ctx)) {
      if (seen.has(use.startIndex)) continue;
      seen.add(use.startIndex);
      const useConsumer = consumerOf(use, ctx);
      if (useConsumer.kind === 'assigned' && outermost(use).parent?.type === 'assignment') continue; // aliasing
      if (useConsumer.kind === 'sorted' || useConsumer.kind === 'order-free' || inMessage(use)) continue;
      if (kindOf() !== 'other' && readsOrder(useConsumer, use, kindOf(), ctx)) report(use, kindOf(), ctx);
    }
    return;
  }
  if (consumer.kind === 'sorted' || consumer.kind === 'order-free' || inMessage(node)) return;
  if (kindOf() !== 'other' && readsOrder(consumer, node, kindOf(), ctx)) report(node, kindOf(), ctx);
}

/** Set literals and comprehensions, found from the `{` that opens them. */
function setDisplays(root: Node, ctx: RuleContext): Node[] {
  const out: Node[] = [];
  for (const m of ctx.text.matchAll(/\{(?!\s*\})/g)) {
    const brace = root.descendantForIndex(m.index, m.index + 1);
    const parent = brace?.type === '{' ? brace.parent : undefined;
    if (parent && (parent.type === 'set' || parent.type === 'set_comprehension') && parent.startIndex === m.index) out.push(parent);
  }
  return out;
}

function scan(root: Node, ctx: RuleContext): void {
  const seen = new Set<number>();
  const checked = new Set<number>();
  const candidates = [...callsByName(root, ctx, 'set|frozenset', 'function'), ...setDisplays(root, ctx)];
  for (const candidate of candidates) {
    if (!isSetExpression(candidate, ctx)) continue;
    // Check `a | b` once, from its outermost set expression.
    let node = candidate;
    for (let parent = outermost(node).parent; parent?.type === 'binary_operator' && isSetExpression(parent, ctx); parent = outermost(parent).parent) node = parent;
    if (checked.has(node.startIndex)) continue;
    checked.add(node.startIndex);
    checkExpression(node, ctx, seen);
  }
}

const rule: Rule = {
  id: 'BX306',
  name: 'set-iteration-order',
  family: 'rng-data',
  defaultSeverity: 'warning',
  summary: 'Iterating a set of strings (vocabulary, labels) in hash order, which changes with every interpreter start.',
  facts: [
    { torch: '', source: 'docs', text: 'Python salts the hashes of str and bytes per process unless PYTHONHASHSEED is set before start-up; set iteration order follows the hashes and is not guaranteed by the language' },
  ],
  triggers: ['set(', 'frozenset('],
  onFile: scan,
  docs: `
A set has no order of its own: iterating it visits the elements in the order of their hash slots.
For \`str\` and \`bytes\` those hashes are salted with a random value chosen when the interpreter
starts, so \`list(set(labels))\` or \`{w: i for i, w in enumerate(set(words))}\` produce a different
order, and different ids, in every run and in every worker process. A model trained with one label
mapping and evaluated with another silently scores nonsense; an embedding table indexed by such a
vocabulary cannot be reloaded.

Reported where the iteration order is consumed: a \`for\` loop that collects, numbers, or stops at
the first element; a list, tuple or comprehension built from the set and stored or returned;
\`enumerate()\`, \`zip()\`, \`"".join()\`, \`[*s]\`, \`sum()\`. Also followed through a name
(\`vocab = set(words)\`, then \`for w in vocab\`). Not reported: membership tests, \`len\`, set
algebra, \`sorted(...)\`, loops that only print or check, dicts keyed by the elements
(\`{w: f(w) for w in s}\`, looked up rather than iterated), and sets that only end up in a message
(exceptions, assertions, log calls, f-strings).

- **warning** when the elements are known to be strings: string literals, \`str\` methods
  (\`split\`, \`lower\`, \`strip\`...), \`re.findall\`, \`os.listdir\`, \`Path.name\`, a comprehension
  producing such values, or a parameter annotated \`str\` / \`list[str]\`. The quick-fix wraps the
  iterated set in \`sorted(...)\`.
- **info** when the element type is unknown (a name from elsewhere, a DataFrame column), and only
  for the clearest signs of building ids: positions (\`enumerate\`, \`zip\`) or a list, tuple or
  comprehension stored from the set. A set of integers iterates in a stable order, a set of strings
  (or of objects hashed by identity) does not. Names that merely sound textual do not count as
  evidence.
- nothing for sets of numbers (\`set(range(n))\`, integer literals).

\`\`\`python
labels = [line.split(",")[1].strip() for line in open(path)]
classes = list(set(labels))                                  # BX306 warning
vocab = {w: i for i, w in enumerate(set(text.split()))}      # BX306 warning
classes = sorted(set(labels))                                # fine
\`\`\`

Setting \`PYTHONHASHSEED\` in the launcher also pins the order, but only for that exact Python
version and insertion history; sorting removes the dependence.
`,
};
export default rule;
