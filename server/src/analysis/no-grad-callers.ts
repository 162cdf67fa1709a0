// Functions that run without gradients because every call of them does (autograd.ts says it of one
// call site): `resize_pos_embed` called only from `checkpoint_filter_fn`, a hook handed to
// `register_load_state_dict_pre_hook`, a helper called only under `torch.no_grad()`. Calls are
// matched by name across the program's files, as program.ts does for mode switches. The answer is
// "no backward" only on evidence: at least one call on the training path, and every use of the name
// a call that runs without gradients (or from such a function) or a load hook's registration. A name
// that is passed, stored, aliased or imported under another name may be called anywhere: it keeps
// its backward, as does a function nothing calls (a library's API), `forward` and dunder methods
// (called by the framework), and functions registered by a decorator (called through a registry).
import type { Node } from 'web-tree-sitter';
import { runsWithoutGrad } from './autograd.js';
import type { ImportScope } from './scope.js';
import { enclosingFunction } from './syntax.js';

/** One use of a name: a call without gradients, a call from these functions (innermost first), or anything else. */
export type Use = { kind: 'no-grad' } | { kind: 'call'; callers: string[] } | { kind: 'other' };

export interface NameUses {
  /** The file defines a function of this name (its uses are not another file's def's). */
  defines: boolean;
  uses: Use[];
}

/** Registration calls whose hook runs while a state dict loads or saves: never differentiated. */
const STATE_DICT_HOOK = /^_?register_(load_)?state_dict_(pre_|post_)?hook$/;
/** Decorators that register a function for calls through a registry, by name. */
const REGISTERING_DECORATOR = /(^|\.)_?register\w*$/;
/** Names the framework calls without a call in the source. */
export const IMPLICIT = /^(forward|__\w+__)$/;

/**
 * The functions `node` stands in, innermost first, up to the first one the framework or a registry
 * may call implicitly (whose callers the source does not show).
 */
export function callableChain(node: Node): string[] {
  const chain: string[] = [];
  for (let fn = enclosingFunction(node); fn; fn = enclosingFunction(fn)) {
    const name = fn.childForFieldName('name')?.text;
    if (!name || IMPLICIT.test(name) || registered(fn)) break;
    chain.push(name);
  }
  return chain;
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
    const entry: NameUses = { defines: false, uses: [] };
    for (const node of identifiersNamed(root, name, text)) {
      const use = useOf(node, scope);
      if (use === 'definition') entry.defines = true;
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

function useOf(node: Node, scope: ImportScope): Use | 'definition' | undefined {
  const parent = node.parent;
  if (!parent) return { kind: 'other' };
  if (parent.type === 'function_definition' && parent.childForFieldName('name')?.equals(node)) return 'definition';
  // `from m import name` binds it; `import name as other` or `from m import name as other` renames it.
  if (parent.type === 'dotted_name' || parent.type === 'aliased_import') {
    const renamed = parent.type === 'aliased_import' || parent.parent?.type === 'aliased_import';
    return renamed ? { kind: 'other' } : undefined;
  }
  if (parent.type === 'attribute' && !parent.childForFieldName('attribute')?.equals(node)) return { kind: 'other' };
  const reference = parent.type === 'attribute' ? parent : node;
  const holder = reference.parent;
  if (holder?.type === 'call' && holder.childForFieldName('function')?.equals(reference)) {
    return runsWithoutGrad(holder, scope) ? { kind: 'no-grad' } : { kind: 'call', callers: callableChain(holder) };
  }
  if (holder?.type === 'argument_list' && holder.parent?.type === 'call') {
    const fn = holder.parent.childForFieldName('function');
    const last = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : fn?.text;
    if (last && STATE_DICT_HOOK.test(last)) return { kind: 'no-grad' };
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
 */
export function runsOnlyWithoutGrad(name: string, file: number, lookup: (name: string, first: number) => Iterable<FileUses>, visiting = new Set<string>()): boolean {
  const key = `${file}\u0000${name}`;
  if (visiting.has(key) || visiting.size > 8) return false;
  visiting.add(key);
  try {
    let calls = 0;
    for (const entry of lookup(name, file)) {
      const found = entry.uses;
      if (found.defines && entry.file !== file) continue;
      for (const use of found.uses) {
        if (use.kind === 'other') return false;
        calls++;
        if (use.kind === 'call' && !use.callers.some((caller) => runsOnlyWithoutGrad(caller, entry.file, lookup, visiting))) return false;
      }
    }
    return calls > 0;
  } finally {
    visiting.delete(key);
  }
}
