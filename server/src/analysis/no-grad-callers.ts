// Functions that run without gradients because every call of them does (autograd.ts says it of one
// call site): `resize_pos_embed` called only from `checkpoint_filter_fn`, a hook handed to
// `register_load_state_dict_pre_hook`, a helper called only under `torch.no_grad()`. Calls are
// matched by name across the program's files, as program.ts does for mode switches. The answer is
// "no backward" only on evidence: at least one call on the training path, and every use of the name
// a call that runs without gradients (or from such a function) or a load hook's registration. A name
// that is passed, stored, aliased or imported under another name may be called anywhere: it keeps
// its backward, as does a function nothing calls (a library's API), `forward` and dunder methods
// (called by the framework), and functions registered by a decorator (called through a registry).
// A module-level instance (`pool = nn.AvgPool3d(2)`) is followed by its name: calling it runs its
// forward there. The same climb answers whether code is reached only from test functions
// (`test_*`): there a class is followed by its name too, as its instances exist only where it is
// called (for gradients a class is not: an instance made under no_grad may be trained later).
import type { Node } from 'web-tree-sitter';
import { runsWithoutGrad } from './autograd.js';
import type { ImportScope } from './scope.js';
import { enclosingFunction } from './syntax.js';

/**
 * One use of a name: a call (without gradients or not; from these functions, innermost first), or
 * anything else.
 */
export type Use = { kind: 'call'; noGrad: boolean; callers: string[] } | { kind: 'other' };

export interface NameUses {
  /** The file defines a function, class or module-level value of this name (its uses are not another file's def's). */
  defines: boolean;
  /** What it defines is a class: a call makes an instance. */
  isClass: boolean;
  uses: Use[];
}

/** Test functions by pytest's and unittest's naming: `test_resize`, `testResize`, `test`. */
const TEST_FUNCTION = /^test(_|[A-Z0-9]|$)/;

/** Registration calls whose hook runs while a state dict loads or saves: never differentiated. */
const STATE_DICT_HOOK = /^_?register_(load_)?state_dict_(pre_|post_)?hook$/;
/** Decorators that register a function for calls through a registry, by name. */
const REGISTERING_DECORATOR = /(^|\.)_?register\w*$/;
/** Names the framework calls without a call in the source. */
export const IMPLICIT = /^(forward|__\w+__)$/;

/**
 * The functions `node` stands in, innermost first, up to the first one a registry may call
 * implicitly (whose callers the source does not show). A method the framework calls (`forward`,
 * `__init__`) is followed by its class's name. `instance`: a hit at module level in `name = ...`
 * stands in `name` (a module-level instance, run where it is called); not so a call whose callers
 * are asked (`y = pool(x)` at module level runs at import, with gradients on).
 */
export function callableChain(node: Node, instance = false): string[] {
  const chain: string[] = [];
  let fn = enclosingFunction(node);
  if (!fn) {
    const name = instance ? moduleLevelTarget(node) : undefined;
    return name ? [name] : [];
  }
  for (let at: Node | undefined = fn; at; at = enclosingFunction(at)) {
    const name = at.childForFieldName('name')?.text;
    if (!name || registered(at)) break;
    if (IMPLICIT.test(name)) {
      const klass = classOf(at);
      const className = klass?.childForFieldName('name')?.text;
      if (!klass || !className) break;
      chain.push(className);
      at = klass;
      continue;
    }
    chain.push(name);
  }
  return chain;
}

/** The class a method is defined in. */
function classOf(method: Node): Node | undefined {
  const holder = method.parent?.type === 'decorated_definition' ? method.parent.parent : method.parent;
  return holder?.type === 'block' && holder.parent?.type === 'class_definition' ? holder.parent : undefined;
}

/** `name` of the module-level statement `name = ...` holding `node`. */
function moduleLevelTarget(node: Node): string | undefined {
  let statement: Node | null = node;
  while (statement && statement.parent?.type !== 'module') statement = statement.parent;
  const assignment = statement?.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
  const left = assignment?.type === 'assignment' ? assignment.childForFieldName('left') : undefined;
  return left?.type === 'identifier' ? left.text : undefined;
}

function registered(fn: Node): boolean {
  const decorated = fn.parent?.type === 'decorated_definition' ? fn.parent : undefined;
  return !!decorated?.namedChildren.some((d) => {
    if (d.type !== 'decorator') return false;
    const expr = d.namedChildren[0];
    const target = expr?.type === 'call' ? expr.childForFieldName('function') : expr;
    return !!target && REGISTERING_DECORATOR.test(target.text);
  });
}

/** The uses of `names` in one file (a parsed tree and its import scope). */
export function usesOf(root: Node, names: Iterable<string>, scope: ImportScope): Map<string, NameUses> {
  const result = new Map<string, NameUses>();
  // Read once: each name's search runs over the same text.
  const text = root.text;
  for (const name of names) {
    const entry: NameUses = { defines: false, isClass: false, uses: [] };
    for (const node of identifiersNamed(root, name, text)) {
      const use = useOf(node, scope);
      if (use === 'definition' || use === 'class') [entry.defines, entry.isClass] = [true, entry.isClass || use === 'class'];
      else if (use) entry.uses.push(use);
    }
    result.set(name, entry);
  }
  return result;
}

/**
 * Every identifier spelled `name` under `root`, found by a search of its text (`text`: root.text, read
 * once by a caller asking for several names). Matches in strings and comments are left out.
 */
export function identifiersNamed(root: Node, name: string, text = root.text): Node[] {
  const found: Node[] = [];
  const start = root.startIndex;
  for (const match of text.matchAll(new RegExp(`\\b${name}\\b`, 'g'))) {
    const node = root.descendantForIndex(start + match.index, start + match.index + name.length);
    if (node && node.type === 'identifier' && node.text === name) found.push(node);
  }
  return found;
}

function useOf(node: Node, scope: ImportScope): Use | 'definition' | 'class' | undefined {
  const parent = node.parent;
  if (!parent) return { kind: 'other' };
  if (parent.type === 'function_definition' && parent.childForFieldName('name')?.equals(node)) return 'definition';
  if (parent.type === 'class_definition' && parent.childForFieldName('name')?.equals(node)) return 'class';
  // `pool = nn.AvgPool3d(2)` at module level defines the instance its calls run.
  if (parent.type === 'assignment' && parent.childForFieldName('left')?.equals(node) && parent.parent?.type === 'expression_statement' && parent.parent.parent?.type === 'module') return 'definition';
  // `from m import name` binds it; `import name as other` or `from m import name as other` renames it.
  if (parent.type === 'dotted_name' || parent.type === 'aliased_import') {
    const renamed = parent.type === 'aliased_import' || parent.parent?.type === 'aliased_import';
    return renamed ? { kind: 'other' } : undefined;
  }
  if (parent.type === 'attribute' && !parent.childForFieldName('attribute')?.equals(node)) return { kind: 'other' };
  const reference = parent.type === 'attribute' ? parent : node;
  const holder = reference.parent;
  if (holder?.type === 'call' && holder.childForFieldName('function')?.equals(reference)) {
    return { kind: 'call', noGrad: runsWithoutGrad(holder, scope), callers: callableChain(holder) };
  }
  // `class Flash(Attention):` runs Attention's methods where Flash's instances run.
  const subclass = holder?.type === 'argument_list' ? holder.parent : undefined;
  if (subclass?.type === 'class_definition' && subclass.childForFieldName('superclasses')?.equals(holder!) && reference === node) {
    const name = subclass.childForFieldName('name')?.text;
    return name ? { kind: 'call', noGrad: false, callers: [name] } : { kind: 'other' };
  }
  if (holder?.type === 'argument_list' && holder.parent?.type === 'call') {
    const fn = holder.parent.childForFieldName('function');
    const last = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : fn?.text;
    if (last && STATE_DICT_HOOK.test(last)) return { kind: 'call', noGrad: true, callers: [] };
  }
  return { kind: 'other' };
}

/** The uses of a name in one file, for the program-wide question. */
export interface FileUses {
  file: number;
  uses: NameUses;
}

/**
 * Does every call of `name` (as defined in file `file`) run without gradients? Uses in other files
 * that define the same name are theirs. `lookup` hands out, lazily, the uses of a name in every file
 * on the training path that mentions it, `file` first: the answer stops at the first use that has a backward.
 * A class is never so (its instances run where they are called, not where they are made).
 */
export function runsOnlyWithoutGrad(name: string, file: number, lookup: (name: string, first: number) => Iterable<FileUses>): boolean {
  return reachedOnlyFrom(name, file, lookup, (use) => use.noGrad, false);
}

/** Is `name` (as defined in file `file`) reached only from test functions, through its callers? */
export function reachedOnlyFromTests(name: string, file: number, lookup: (name: string, first: number) => Iterable<FileUses>): boolean {
  return reachedOnlyFrom(name, file, lookup, (use) => use.callers.some((caller) => TEST_FUNCTION.test(caller)), true);
}

function reachedOnlyFrom(
  name: string,
  file: number,
  lookup: (name: string, first: number) => Iterable<FileUses>,
  endsHere: (use: Extract<Use, { kind: 'call' }>) => boolean,
  followsClasses: boolean,
  visiting = new Set<string>(),
): boolean {
  const key = `${file}\u0000${name}`;
  if (visiting.has(key) || visiting.size > 8) return false;
  visiting.add(key);
  try {
    let calls = 0;
    for (const entry of lookup(name, file)) {
      const found = entry.uses;
      if (found.defines && entry.file !== file) continue;
      if (found.isClass && !followsClasses) return false;
      for (const use of found.uses) {
        if (use.kind === 'other') return false;
        calls++;
        if (!endsHere(use) && !use.callers.some((caller) => reachedOnlyFrom(caller, entry.file, lookup, endsHere, followsClasses, visiting))) return false;
      }
    }
    return calls > 0;
  } finally {
    visiting.delete(key);
  }
}
