// What a file's own calls pass for a parameter. A private helper such as `_index_select(self, src,
// index)`, called only as `self._index_select(src, edge_index[dim])`, receives nothing else: what
// holds for every argument at those calls holds for the parameter (index-facts.ts asks this of an
// index that has no definition in its function). Only on evidence: the function is defined once in
// the file, called at least once, and its name is used nowhere but as a callee (a name that is
// passed, stored or called through `*args` may receive anything); a call that leaves the parameter
// to its default, or spreads its arguments, makes the answer unknown.
import type { Node, Tree } from 'web-tree-sitter';
import { IMPLICIT } from './no-grad-callers.js';
import { parentOf } from './parents.js';
import { callArguments } from './syntax.js';

interface NameUses {
  definitions: number;
  calls: Node[];
  /** Used other than as the callee of a call (passed, stored, aliased). */
  escapes: boolean;
}

const usesByTree = new WeakMap<Tree, Map<string, NameUses>>();

/**
 * The argument each call in the file passes for `parameter` (an identifier naming a parameter of its
 * enclosing function), or undefined when the calls in view cannot be all there is.
 */
export function callSiteArguments(parameter: Node): Node[] | undefined {
  const fn = declaringFunction(parameter);
  const name = fn?.childForFieldName('name')?.text;
  if (!fn || !name || IMPLICIT.test(name)) return undefined;
  const slot = parameterSlot(fn, parameter.text);
  if (!slot) return undefined;
  const uses = usesOf(parameter.tree).get(name);
  if (!uses || uses.definitions !== 1 || uses.escapes || uses.calls.length === 0) return undefined;
  const holder = parentOf(fn);
  // A decorated function may be called through what the decorator registers it with.
  if (holder?.type === 'decorated_definition') return undefined;
  const method = holder?.type === 'block' && parentOf(holder)?.type === 'class_definition';
  const found: Node[] = [];
  for (const call of uses.calls) {
    const args = callArguments(call);
    if (args.hasSplat) return undefined;
    const callee = call.childForFieldName('function')!;
    // `self.f(a)` binds self itself; a method called by its bare name is not this method.
    const throughSelf = callee.type === 'attribute';
    if (method !== throughSelf) return undefined;
    const byName = args.keywords.get(parameter.text);
    const positional = slot.keywordOnly ? undefined : args.positional[slot.index - (method ? 1 : 0)];
    const value = byName ?? positional;
    if (!value) return undefined;
    found.push(value);
  }
  return found;
}

/** The innermost function whose parameters declare `parameter`'s name. */
function declaringFunction(parameter: Node): Node | undefined {
  for (let node = parentOf(parameter); node; node = parentOf(node)) {
    if (node.type === 'function_definition' && parameterSlot(node, parameter.text)) return node;
  }
  return undefined;
}

/** The position of parameter `name` in `fn`'s signature (self included), and whether it is keyword-only. */
function parameterSlot(fn: Node, name: string): { index: number; keywordOnly: boolean } | undefined {
  const params = fn.childForFieldName('parameters');
  if (!params) return undefined;
  let index = 0;
  let keywordOnly = false;
  for (const p of params.namedChildren) {
    if (!p) continue;
    if (p.type === 'list_splat_pattern' || p.type === 'keyword_separator') {
      keywordOnly = true;
      continue;
    }
    if (p.type === 'dictionary_splat_pattern' || p.type === 'positional_separator') continue;
    const id = p.type === 'identifier' ? p : (p.childForFieldName('name') ?? p.namedChildren.find((c) => c?.type === 'identifier'));
    if (id?.text === name) return { index, keywordOnly };
    index++;
  }
  return undefined;
}

/**
 * Every name's definitions, calls and other uses in the file: one walk per tree. (no-grad-callers.ts
 * searches the text for the few names a program-wide question asks; here every helper with an index
 * parameter may be asked, and one search of the whole text per name would grow with their product.)
 */
function usesOf(tree: Tree): Map<string, NameUses> {
  let uses = usesByTree.get(tree);
  if (uses) return uses;
  const found = new Map<string, NameUses>();
  uses = found;
  const entry = (name: string) => {
    let e = found.get(name);
    if (!e) found.set(name, (e = { definitions: 0, calls: [], escapes: false }));
    return e;
  };
  const visit = (node: Node, parent: Node | undefined) => {
    if (node.type === 'function_definition') {
      const name = node.childForFieldName('name')?.text;
      if (name) entry(name).definitions++;
    } else if (node.type === 'call') {
      const callee = node.childForFieldName('function');
      const name = calleeName(callee);
      if (name) entry(name).calls.push(node);
      // `other.f(...)`: a call of some `f` through an object that is not self: callers not all in view.
      else if (callee?.type === 'attribute') entry(callee.childForFieldName('attribute')?.text ?? '').escapes = true;
    } else if (node.type === 'identifier' || node.type === 'attribute') {
      const name = node.type === 'identifier' ? node.text : node.childForFieldName('attribute')?.text;
      const isCallee = parent?.type === 'call' && parent.childForFieldName('function')?.id === node.id;
      const isDefName = parent?.type === 'function_definition' && parent.childForFieldName('name')?.id === node.id;
      const isAttributePart = node.type === 'identifier' && parent?.type === 'attribute';
      if (name && !isCallee && !isDefName && !isAttributePart) entry(name).escapes = true;
    }
  };
  // Depth-first over the whole tree with one cursor, the parents on a stack (node.parent would
  // descend from the root each time).
  const cursor = tree.walk();
  const stack: Node[] = [];
  try {
    for (;;) {
      const node = cursor.currentNode;
      visit(node, stack[stack.length - 1]);
      if (cursor.gotoFirstChild()) {
        stack.push(node);
        continue;
      }
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) {
          usesByTree.set(tree, uses);
          return uses;
        }
        stack.pop();
      }
    }
  } finally {
    cursor.delete();
  }
}

/** `f(...)` → f; `self.f(...)` / `cls.f(...)` → f; any other callee (`obj.f`, `a[0]()`) → none. */
function calleeName(callee: Node | null): string | undefined {
  if (!callee) return undefined;
  if (callee.type === 'identifier') return callee.text;
  if (callee.type !== 'attribute') return undefined;
  const object = callee.childForFieldName('object')?.text;
  return object === 'self' || object === 'cls' ? callee.childForFieldName('attribute')?.text : undefined;
}
