// The class a method stands in and what its `__init__` sets up: ValueHints (values.ts) reads
// `self.x` through these.
import type { Node } from 'web-tree-sitter';
import { callArguments, enclosingFunction, literalValue } from './syntax.js';

/** The `__init__` of the class a method's code stands in. */
export function initOf(node: Node): Node | undefined {
  const body = enclosingClass(node)?.childForFieldName('body');
  return body?.namedChildren.map((c) => (c.type === 'decorated_definition' ? c.childForFieldName('definition') : c)).find((c) => c?.type === 'function_definition' && c.childForFieldName('name')?.text === '__init__') ?? undefined;
}

/**
 * The class a method's code stands in. A function nested in a method without a `self` of its own
 * (a local helper such as `def _resize(size): ... self.mode ...`) reads the method's `self`.
 */
function enclosingClass(node: Node): Node | undefined {
  let inner = enclosingFunction(node);
  for (let current = inner?.parent; current; current = current.parent) {
    if (current.type === 'class_definition') return current;
    if (current.type !== 'function_definition') continue;
    if (inner && ownsSelf(inner)) return undefined;
    inner = current;
  }
  return undefined;
}

function ownsSelf(fn: Node): boolean {
  return !!fn.childForFieldName('parameters')?.namedChildren.some((p) => (p.type === 'identifier' ? p : p.childForFieldName('name') ?? p.namedChildren[0])?.text === 'self');
}

/**
 * `self.x` that its class's `__init__` registers as a buffer (`self.register_buffer("x", ...)`): no
 * grad. A class of the same file it derives from counts too (the base registers the table, the
 * subclass reads it), unless a class nearer to the use assigns `self.x` in its `__init__`.
 */
export function isBuffer(node: Node): boolean {
  const name = node.childForFieldName('attribute')?.text;
  const klass = enclosingClass(node);
  if (!name || !klass) return false;
  // baseClassesOf lists each base once and never `klass` itself.
  for (const c of [klass, ...baseClassesOf(klass)]) {
    const init = methodsOf(c).get('__init__');
    if (!init) continue;
    if (init.descendantsOfType('call').some((call) => call.childForFieldName('function')?.text === 'self.register_buffer' && literalValue(callArguments(call).positional[0]) === name)) return true;
    if (init.descendantsOfType('assignment').some((a) => a.childForFieldName('left')?.text === `self.${name}`)) return false;
  }
  return false;
}

/** The classes of the same file that `klass` derives from, nearest first (by base name). */
function baseClassesOf(klass: Node): Node[] {
  const classes = classesOfFile(klass);
  const found: Node[] = [];
  const pending = [klass];
  while (pending.length && found.length < 16) {
    const current = pending.shift()!;
    for (const base of current.childForFieldName('superclasses')?.namedChildren ?? []) {
      const match = classes.find((c) => c.childForFieldName('name')?.text === base.text.replace(/^.*\./, ''));
      if (match && match.id !== klass.id && !found.some((f) => f.id === match.id)) {
        found.push(match);
        pending.push(match);
      }
    }
  }
  return found;
}

/** The module-level classes of the file holding `klass`. */
function classesOfFile(klass: Node): Node[] {
  const file = klass.parent?.type === 'module' ? klass.parent : klass.parent?.parent?.type === 'module' ? klass.parent.parent : undefined;
  if (!file) return [];
  return file.namedChildren.map((c) => (c.type === 'decorated_definition' ? c.childForFieldName('definition') : c)).filter((c): c is Node => c?.type === 'class_definition');
}

/** `forward` and the names a module delegates its forward to (`_forward`, `forward_features`). */
const FORWARD_NAME = /^_?forward(_\w+)?$/;

function methodsOf(klass: Node): Map<string, Node> {
  const methods = new Map<string, Node>();
  for (const child of klass.childForFieldName('body')?.namedChildren ?? []) {
    const fn = child.type === 'decorated_definition' ? child.childForFieldName('definition') : child;
    const name = fn?.type === 'function_definition' ? fn.childForFieldName('name')?.text : undefined;
    if (fn && name) methods.set(name, fn);
  }
  return methods;
}

/** The methods a method calls on its own instance (`self.attend(q, k, v)`), where gradients are recorded. */
function selfCallees(fn: Node, methods: Map<string, Node[]>, withoutGrad: (node: Node) => boolean): Node[] {
  const callees: Node[] = [];
  for (const call of fn.descendantsOfType('call')) {
    if (withoutGrad(call)) continue;
    const target = call.childForFieldName('function');
    if (target?.type !== 'attribute' || target.childForFieldName('object')?.text !== 'self') continue;
    callees.push(...(methods.get(target.childForFieldName('attribute')?.text ?? '') ?? []));
  }
  return callees;
}

/** The classes of the same file that derive from `klass`, directly or through each other (by base name). */
function subclassesOf(klass: Node): Node[] {
  const classes = classesOfFile(klass);
  const names = new Set([klass.childForFieldName('name')?.text ?? '']);
  const found: Node[] = [];
  for (let grew = true; grew; ) {
    grew = false;
    for (const c of classes) {
      const name = c.childForFieldName('name')?.text ?? '';
      if (names.has(name)) continue;
      const bases = c.childForFieldName('superclasses')?.namedChildren ?? [];
      if (!bases.some((b) => names.has(b.text.replace(/^.*\./, '')))) continue;
      names.add(name);
      found.push(c);
      grew = true;
    }
  }
  return found;
}

/**
 * A module-level function that is a layer's forward: `*_forward(module, query, ...)` (transformers'
 * attention-interface functions), or a forward-named function taking `self`, written to replace a
 * layer's forward (`layer.forward = MethodType(sdpa_forward, layer)`, a monkeypatch).
 */
function moduleForward(fn: Node): boolean {
  const first = fn.childForFieldName('parameters')?.namedChildren[0];
  const param = first?.type === 'identifier' ? first.text : first?.childForFieldName('name')?.text ?? first?.namedChildren[0]?.text;
  const name = fn.childForFieldName('name')?.text ?? '';
  return (/_forward$/.test(name) && param === 'module') || (FORWARD_NAME.test(name.replace(/^\w+?_(?=forward$)/, '')) && param === 'self');
}

/** How many module-level callers deep a helper is followed back to a forward path. */
const HELPER_DEPTH = 4;

/**
 * A module-level helper (`def attention(q, k, v)`) that a forward path of the same file calls by
 * name, outside code that runs without gradients, directly or through other such helpers.
 */
function calledFromForward(fn: Node, withoutGrad: (node: Node) => boolean, depth: number): boolean {
  const name = fn.childForFieldName('name')?.text;
  if (!name || depth >= HELPER_DEPTH) return false;
  return fn.tree.rootNode.descendantsOfType('call').some((call) => {
    const callee = call.childForFieldName('function');
    if (callee?.type !== 'identifier' || callee.text !== name || withoutGrad(call)) return false;
    const caller = enclosingFunction(call);
    return !!caller && !caller.equals(fn) && onForwardPath(call, withoutGrad, depth + 1);
  });
}

/**
 * Does the code stand on a class's forward path: in its `forward` (or `_forward`, `forward_*`), or
 * in a method that forward reaches through calls on `self` (an `attention(q, k, v)` helper it
 * delegates to)? A model's layers train unless shown otherwise, so their forward path is training code.
 * A module-level `*_forward(module, query, key, value, ...)` is a layer's forward written outside
 * its class (transformers' attention-interface functions, picked by the layer's configured
 * implementation), and so is a patch `def sdpa_forward(self, ...)`; a module-level helper is on the
 * path when such code of the same file calls it.
 */
export function onForwardPath(node: Node, withoutGrad: (node: Node) => boolean, depth = 0): boolean {
  const fn = enclosingFunction(node);
  let klass: Node | null | undefined = fn?.parent;
  if (klass?.type === 'decorated_definition') klass = klass.parent;
  if (fn && klass?.type === 'module') return moduleForward(fn) || calledFromForward(fn, withoutGrad, depth);
  klass = klass?.type === 'block' ? klass.parent : undefined;
  if (!fn || klass?.type !== 'class_definition') return false;
  // A base class's helpers run from its subclasses' forward (an abstract `forward` in the base,
  // the real one in each block type defined below it): the file's subclasses count as its own.
  const methods = new Map<string, Node[]>();
  for (const member of [klass, ...subclassesOf(klass)]) {
    for (const [name, method] of methodsOf(member)) methods.set(name, [...(methods.get(name) ?? []), method]);
  }
  const seen = new Set<number>();
  const pending = [...methods].filter(([name]) => FORWARD_NAME.test(name)).flatMap(([, found]) => found);
  while (pending.length) {
    const method = pending.pop()!;
    if (method.equals(fn)) return true;
    if (seen.has(method.id)) continue;
    seen.add(method.id);
    pending.push(...selfCallees(method, methods, withoutGrad));
  }
  return false;
}
