// What a statement binds, read off its syntax alone: an import's local names and their qualified
// names (with the install-layout fallbacks and forwarding shims that keep one meaning), an assignment
// reduced to a name and a dotted value (`x = a.b`, `x = a if c else b`, `x = None`), and whether it
// stands in an import's fallback (`except ImportError:`, `if not HAVE_X:`) or under another
// accelerator's flag. ImportScope (scope.ts) turns these into what names resolve to.
import type { Node } from 'web-tree-sitter';
import { compoundParentOf, parentOf } from './parents.js';
import { dottedParts } from './syntax.js';

/** What an import statement binds: local name → qualified name. */
export function importBindingsOf(node: Node): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (forOtherAccelerator(node)) return out;
  if (node.type === 'import_statement') {
    for (const child of node.namedChildren) {
      if (child.type === 'dotted_name') {
        const root = child.text.split('.')[0]!.trim();
        out.push([root, root]);
      } else if (child.type === 'aliased_import') {
        const name = child.childForFieldName('name')?.text;
        const alias = child.childForFieldName('alias')?.text;
        if (name && alias) out.push([alias, compact(name)]);
      }
    }
    return withoutLayoutFallbacks(node, out);
  }
  if (node.type !== 'import_from_statement') return out;
  const moduleNode = node.childForFieldName('module_name');
  if (!moduleNode) return out;
  // Relative imports (`from . import tasks`) name the project's own modules: never torch, never
  // tensors; binding them keeps `tasks.gather(...)` from being read as a tensor method.
  const moduleName = compact(moduleNode.text);
  const separator = moduleName.endsWith('.') ? '' : '.';
  for (const child of node.childrenForFieldName('name')) {
    if (child.type === 'dotted_name') out.push([compact(child.text), `${moduleName}${separator}${compact(child.text)}`]);
    else if (child.type === 'aliased_import') {
      const name = child.childForFieldName('name')?.text;
      const alias = child.childForFieldName('alias')?.text;
      if (name && alias) out.push([alias, `${moduleName}${separator}${compact(name)}`]);
    }
  }
  const shim = forwardingShim(node);
  if (shim) for (const [local, target] of [...out]) if (local === shim.forwards) out.push([shim.name, target]);
  return withoutLayoutFallbacks(node, out);
}

/**
 * `try: import flash_attn_3.flash_attn_interface as fa3` / `except ImportError: import
 * flash_attn_interface as fa3`: one module under two install layouts. The handler's import binds
 * the name to a module of the same last name as the try's; it is the same API, not a second meaning
 * that would leave the name unresolved. Other fallbacks (another library) still make it ambiguous.
 */
function withoutLayoutFallbacks(node: Node, bindings: Array<[string, string]>): Array<[string, string]> {
  if (bindings.length === 0) return bindings;
  let handler: Node | null | undefined = parentOf(node);
  while (handler && handler.type !== 'except_clause' && handler.type !== 'function_definition' && handler.type !== 'module') handler = parentOf(handler);
  const body = handler?.type === 'except_clause' ? parentOf(handler)?.childForFieldName('body') : undefined;
  if (!body) return bindings;
  const tried = new Map(body.namedChildren.filter((c) => c.type === 'import_statement' || c.type === 'import_from_statement').flatMap((c) => importBindingsOf(c)));
  const last = (name: string) => name.slice(name.lastIndexOf('.') + 1);
  const home = (name: string) => name.slice(0, name.lastIndexOf('.'));
  // Also one function renamed between versions of its module (`from flash_attn.flash_attn_interface
  // import flash_attn_unpadded_func`, else its later name `flash_attn_varlen_func as
  // flash_attn_unpadded_func`): the try's import is the one the installed version binds.
  return bindings.filter(([local, target]) => {
    const first = tried.get(local);
    return first === undefined || first === target || (last(first) !== last(target) && (!first.includes('.') || home(first) !== home(target)));
  });
}

/**
 * A lazy-import shim: `def _attn(*args, **kwargs):` that imports a function inside (so the module
 * loads without the package) and ends in `return impl(*args, **kwargs)`. Calling the shim is calling
 * what it imports, so its name is bound to that too.
 */
function forwardingShim(importNode: Node): { name: string; forwards: string } | undefined {
  let fn: Node | null = importNode.parent;
  while (fn && fn.type !== 'function_definition') fn = fn.parent;
  const name = fn?.childForFieldName('name')?.text;
  const parameters = fn?.childForFieldName('parameters')?.namedChildren ?? [];
  const star = parameters.find((p) => p.type === 'list_splat_pattern')?.namedChildren[0]?.text;
  const starStar = parameters.find((p) => p.type === 'dictionary_splat_pattern')?.namedChildren[0]?.text;
  if (!fn || !name || !star || !starStar || parameters.length !== 2) return undefined;
  const last = fn.childForFieldName('body')?.namedChildren.filter((c) => c.type !== 'comment').at(-1);
  const call = last?.type === 'return_statement' ? last.namedChildren[0] : undefined;
  const callee = call?.type === 'call' ? call.childForFieldName('function') : undefined;
  const args = call?.childForFieldName('arguments')?.namedChildren.map((a) => a.text.replace(/\s+/g, ''));
  if (callee?.type !== 'identifier' || args?.join(',') !== `*${star},**${starStar}`) return undefined;
  return { name, forwards: callee.text };
}

/**
 * `name = a.b.c` as [name, ['a', 'b', 'c']]; `name = <anything else>` as [name, undefined];
 * `self.attr = ...` as [`self.attr`, ...]; null for `= None`; `name = a.b if c else d` as
 * [name, ['a', 'b'], ['d']].
 */
export type AliasAssignment = readonly [string, readonly string[] | undefined | null, (readonly string[])?];
export const SELF_PREFIX = 'self.';

/**
 * The part of an assignment that import resolution reads; undefined when it binds no plain name, or
 * when it stands in an `except` handler: `except ImportError: triton = None` (or a MagicMock stub)
 * is the fallback of an import that failed, not a rebinding of the module the code runs with; so
 * is `f = None` in the `else` of an `if` whose branch imports `f`.
 */
export function aliasAssignmentOf(left: Node, right: Node | null, mayBeFallback = true): AliasAssignment | undefined {
  if (left.type === 'attribute' && left.childForFieldName('object')?.text === 'self') {
    const attribute = left.childForFieldName('attribute')?.text;
    if (!attribute || (mayBeFallback && inImportFallback(left))) return undefined;
    return [`${SELF_PREFIX}${attribute}`, right?.type === 'none' ? null : (right && dottedParts(right)) ?? undefined];
  }
  if (left.type !== 'identifier' || (mayBeFallback && inImportFallback(left))) return undefined;
  // `name = a.b if cond else c.d`: either of two dotted names.
  if (right?.type === 'conditional_expression') {
    const [body, , otherwise] = right.namedChildren;
    const first = dottedParts(body);
    const second = dottedParts(otherwise);
    if (first && second) return [left.text, first, second];
  }
  return [left.text, right?.type === 'none' && atModuleLevel(left) ? null : (right && dottedParts(right)) ?? undefined];
}

function atModuleLevel(node: Node): boolean {
  const statement = parentOf(node)?.type === 'assignment' ? parentOf(parentOf(node)!) : undefined;
  return statement?.type === 'expression_statement' && parentOf(statement)?.type === 'module';
}

/**
 * An availability flag tested negatively: `if not HAVE_TRITON:`, `if not TRITON_AVAILABLE:`,
 * `if not is_triton_available():` guard the stubs (`triton = MagicMock()`) of a library that is
 * missing, like an `except ImportError` handler.
 */
const AVAILABILITY = /^(have|has)_|_(available|installed)$|^is_\w+_available$|^\w*available$/i;

/**
 * For each part (parts.ts: top-level statements and functions, in document order), where the first
 * node that may stand in an import fallback can start: an `except` handler or an `if not` branch
 * holding a node begins, with its keyword, before the node and inside the part (what holds a part is
 * a module or a class body). Assignments before it need no walk up (inImportFallback). One scan of
 * the text for all parts. In a tree with syntax errors a keyword may be missing: then every node may.
 */
export function fallbackStarts(text: string, parts: ReadonlyArray<{ start: number; end: number }>, hasError: boolean): number[] {
  if (hasError) return parts.map((p) => p.start);
  let next = -1;
  return parts.map(({ start, end }) => {
    if (next < start) {
      FALLBACK_KEYWORD.lastIndex = start;
      next = FALLBACK_KEYWORD.exec(text)?.index ?? Infinity;
    }
    return Math.min(next, end);
  });
}
const FALLBACK_KEYWORD = /\b(?:except|not|else)\b/g;

function inImportFallback(node: Node): boolean {
  // Only compound nodes (clauses, blocks) count: start at the one holding the statement (parents.ts).
  const start = compoundParentOf(node);
  for (let current = start === undefined ? parentOf(node) : start; current && current.type !== 'function_definition'; current = parentOf(current)) {
    if (current.type === 'except_clause') return true;
    const parent = parentOf(current);
    // `if can_use: (try:) from lib import f  else: f = None`: the stub of the import not taken.
    if (current.type === 'block' && parent?.type === 'else_clause' && node.type === 'identifier') {
      const statement = parentOf(parent);
      const taken = statement?.type === 'if_statement' ? statement.childForFieldName('consequence') : null;
      if (taken && importsName(taken, node.text)) return true;
    }
    if (current.type === 'block' && parent?.type === 'if_statement' && current.equals(parent.childForFieldName('consequence')!)) {
      const condition = parent.childForFieldName('condition');
      if (condition?.type !== 'not_operator') continue;
      let flag = condition.childForFieldName('argument');
      if (flag?.type === 'call') flag = flag.childForFieldName('function');
      const parts = flag ? dottedParts(flag) : undefined;
      if (parts && AVAILABILITY.test(parts[parts.length - 1]!)) return true;
    }
  }
  return false;
}

/** Does an import statement inside `block` bind `name` (`from m import f`, `import m.ops as f`, `import f.x`)? */
function importsName(block: Node, name: string): boolean {
  for (const statement of block.descendantsOfType(['import_statement', 'import_from_statement'])) {
    const names = statement.type === 'import_from_statement' ? statement.childrenForFieldName('name') : statement.namedChildren;
    for (const imported of names) {
      const bound = imported.type === 'aliased_import' ? imported.childForFieldName('alias')?.text : statement.type === 'import_from_statement' ? imported.text.split('.').pop() : imported.text.split('.')[0];
      if (bound === name) return true;
    }
  }
  return false;
}

/**
 * Another accelerator's backend: `if is_npu_available:` / `if is_torch_xpu_available():` around an
 * import that rebinds a CUDA kernel's name (`npu_flash_attn_varlen_func as flash_attn_varlen_func`).
 * bitexact's facts are CUDA's (roles.ts leaves such backends off the path), so the CUDA import is
 * the one the names keep.
 */
const OTHER_ACCELERATOR = /(^|_)(npu|xpu|hpu|mlu|musa|ascend)(_|$)/i;

function forOtherAccelerator(node: Node): boolean {
  for (let current = parentOf(node); current && current.type !== 'function_definition'; current = parentOf(current)) {
    const parent = parentOf(current);
    if (current.type !== 'block' || parent?.type !== 'if_statement' || !current.equals(parent.childForFieldName('consequence')!)) continue;
    let flag = parent.childForFieldName('condition');
    if (flag?.type === 'call') flag = flag.childForFieldName('function');
    const parts = flag ? dottedParts(flag) : undefined;
    if (parts && OTHER_ACCELERATOR.test(parts[parts.length - 1]!)) return true;
  }
  return false;
}

function compact(dotted: string): string {
  return dotted.replace(/\s+/g, '');
}
