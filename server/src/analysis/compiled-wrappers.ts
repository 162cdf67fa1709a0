// A project's Python names for its compiled ops: a module-level function whose body calls one
// (`def scatter_sum(src, index): return torch.ops.pkg.scatter_sum(src, index)`), and a
// `torch.autograd.Function` whose forward or backward calls one, through `Fn.apply` or a module
// alias of it (`grouping_operation = GroupingOperation.apply`). A call of the project name runs the
// kernel the op reaches (a backward's only when a gradient flows back), so it is added to the
// compiled facts under the name's qualified form, and under the names packages re-export it as
// (`from .functions import MSDeformAttnFunction`). Only files naming a compiled module are parsed.
import type { Node } from 'web-tree-sitter';
import type { CompiledAtomic } from './compiled-extensions.js';
import { fromImports } from './project-aliases.js';
import { ImportScope } from './scope.js';

export interface WrapperSource {
  module?: string;
  isPackage?: boolean;
  text: string;
}

type Parse = (text: string) => { rootNode: Node; delete(): void };

const MAX_ROUNDS = 4;

/** `compiled` with the project's own names for its ops added (a float atomic add reached only). */
export function withCompiledWrappers(files: readonly WrapperSource[], parse: Parse, compiled: ReadonlyMap<string, CompiledAtomic>): Map<string, CompiledAtomic> {
  const out = new Map(compiled);
  const modules = [...new Set([...compiled.keys()].map((k) => k.split('.').at(-2)!))].filter((m) => /^\w+$/.test(m));
  if (!modules.length) return out;
  const named = new RegExp(`\\b(?:${modules.join('|')})\\b`);
  const context = { aliases: {}, compiled: Object.fromEntries(compiled) };
  const added = new Map<string, CompiledAtomic>();
  for (const file of files) {
    if (!file.module || !file.text.includes('import') || !named.test(file.text)) continue;
    const tree = parse(file.text);
    try {
      const scope = new ImportScope({ ...context, module: file.module, isPackage: file.isPackage });
      // Module-level imports, also those under `try:` / `if`: not a function's or class's own.
      for (const s of tree.rootNode.descendantsOfType(['import_statement', 'import_from_statement'])) if (!insideDefinition(s)) scope.addImport(s);
      for (const [name, hit] of wrappersIn(tree.rootNode, scope)) added.set(`${file.module}.${name}`, hit);
    } finally {
      tree.delete();
    }
  }
  if (!added.size) return out;
  // Re-exports of the wrappers themselves (`from .functions import MSDeformAttnFunction`), in rounds:
  // a module re-exporting the compiled module is no new name for anything.
  for (let round = 0; round < MAX_ROUNDS; round++) {
    let grew = false;
    for (const file of files) {
      if (!file.module) continue;
      for (const [local, target] of fromImports(file)) {
        for (const suffix of ['', '.apply']) {
          const hit = added.get(target + suffix);
          const name = `${file.module}.${local}${suffix}`;
          if (hit && !added.has(name)) {
            added.set(name, hit);
            grew = true;
          }
        }
      }
    }
    if (!grew) break;
  }
  for (const [k, v] of added) if (!out.has(k)) out.set(k, v);
  return out;
}

/** The float atomic a function body reaches through the compiled calls it makes, the first one. */
function reachedIn(body: Node, scope: ImportScope): CompiledAtomic | undefined {
  let unknown: CompiledAtomic | undefined;
  for (const call of body.descendantsOfType('call')) {
    const fn = call.childForFieldName('function');
    const qualified = fn?.type === 'attribute' ? scope.resolveExpression(fn) : undefined;
    const hit = qualified ? scope.compiledCall(qualified) : undefined;
    if (hit?.type === 'float') return hit;
    unknown ??= hit;
  }
  return unknown;
}

/** Module-level names that run a compiled op: functions, `Class.apply` of autograd Functions, aliases of those. */
function wrappersIn(root: Node, scope: ImportScope): Map<string, CompiledAtomic> {
  const out = new Map<string, CompiledAtomic>();
  for (const statement of root.namedChildren) {
    const def = statement.type === 'decorated_definition' ? statement.childForFieldName('definition') : statement;
    if (def?.type === 'function_definition') {
      const hit = reachedIn(def.childForFieldName('body')!, scope);
      if (hit) out.set(def.childForFieldName('name')!.text, hit);
    } else if (def?.type === 'class_definition' && /\bFunction\b/.test(def.childForFieldName('superclasses')?.text ?? '')) {
      const methods = new Map<string, Node>();
      for (const m of def.childForFieldName('body')?.namedChildren ?? []) {
        const fn = m.type === 'decorated_definition' ? m.childForFieldName('definition') : m;
        if (fn?.type === 'function_definition') methods.set(fn.childForFieldName('name')!.text, fn);
      }
      const forward = methods.get('forward') && reachedIn(methods.get('forward')!, scope);
      const backward = methods.get('backward') && reachedIn(methods.get('backward')!, scope);
      const hit = forward?.type === 'float' || !backward ? forward : backward.type === 'float' || !forward ? { ...backward, backwardOnly: true } : forward;
      if (hit) out.set(`${def.childForFieldName('name')!.text}.apply`, hit);
    }
  }
  // `grouping_operation = GroupingOperation.apply`
  for (const statement of root.namedChildren) {
    const a = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
    const left = a?.type === 'assignment' ? a.childForFieldName('left') : undefined;
    const right = a?.childForFieldName('right');
    const hit = left?.type === 'identifier' && right ? out.get(right.text) : undefined;
    if (hit) out.set(left!.text, hit);
  }
  return out;
}

function insideDefinition(node: Node): boolean {
  for (let p = node.parent; p; p = p.parent) if (p.type === 'function_definition' || p.type === 'class_definition') return true;
  return false;
}
