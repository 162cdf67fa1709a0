// Whole-file scans for rules that read more than one call (they run from Rule.onFile): builtin calls
// (`hash`, `set`, `sorted`) found through the text, per-file memos, the scope a node belongs to.
import type { Node } from 'web-tree-sitter';
import { rootOf } from '../../syntax.js';
import type { RuleContext } from '../rule.js';

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

export { rootOf };

/** The file's calls in document order, listed once per file for the rules that read them all. */
export function fileCalls(root: Node, ctx: RuleContext): Node[] {
  return memo(ctx, 'file-calls', () => root.descendantsOfType('call'));
}


const SCOPE_TYPES = new Set(['function_definition', 'lambda', 'class_definition', 'module']);

/** The function, lambda, class or module a node belongs to. */
export function scopeOf(node: Node): Node {
  let current = node.parent;
  while (current && !SCOPE_TYPES.has(current.type)) current = current.parent;
  return current ?? rootOf(node);
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
 * source text, erring towards "bound": a false yes only hides a builtin finding. A loop's targets
 * end at its `in` (`for s in set(...)` binds `s`, not `set`).
 */
function boundInFile(name: string, ctx: RuleContext): boolean {
  return memo(ctx, `bound:${name}`, () => {
    const n = name.replace(/[^\w]/g, '');
    return new RegExp(
      `\\b(def|class)\\s+${n}\\b|(?<![\\w.])${n}\\s*(=(?!=)|:[^=])|\\bdef\\s+\\w+\\s*\\((?:[^)]*?,)?\\s*\\*{0,2}${n}\\s*[,)=:]|\\bfor\\s+((?:(?!\\bin\\b)[\\w\\s,(])*[\\s,(])?${n}\\b[^\\n]*\\bin\\b|\\bas\\s+${n}\\b`,
    ).test(codeText(ctx));
  });
}

/** The file's text without its comments: a comment's "at all: it..." binds nothing. */
function codeText(ctx: RuleContext): string {
  return memo(ctx, 'code-text', () => ctx.text.replace(/#[^\n]*/g, ''));
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
