// A project's own names for torch functions: a module that says `interpolate = F.interpolate` (or
// `from torch.nn.functional import interpolate`) at module level, re-exported by its package's
// `__init__.py` (`from .wrappers import interpolate`), lets other modules call
// `from pkg.layers import interpolate; interpolate(x, mode="bilinear")`: that is F.interpolate. The
// per-file analysis sees only a project name; this pass maps such names to what they stand for, so
// the files that import them are analysed with it (Checker.checkProgram, `bitexact check` only).
// Cheap where there is nothing: only files with a module-level `name = a.b` line are parsed.
import type { Node } from 'web-tree-sitter';
import { importBindingsOf } from './binding-statements.js';
import { canonicalName, ImportScope } from './scope.js';
import { absoluteName } from './module-names.js';
import { dottedParts } from './syntax.js';

/** A project's aliases: qualified project name → the torch name it stands for. */
export type ProjectAliases = ReadonlyMap<string, string>;

export interface AliasSource {
  /** The file's module (`pkg.layers.wrappers`, `pkg.layers` for its `__init__.py`); undefined: none. */
  module?: string;
  /** Whether the file is a package's `__init__.py` (its relative imports start from itself). */
  isPackage?: boolean;
  text: string;
}

type Parse = (text: string) => { rootNode: Node; delete(): void };

const MAX_ROUNDS = 4;

/**
 * The project names that stand for torch names, over the files of one program. `finals`: the last
 * segments of the torch names rules call (`interpolate`): only those are worth an alias. Imports
 * are read from the text; only a file with a module-level `name = a.b.<final>` line is parsed.
 */
export function projectAliases(files: readonly AliasSource[], parse: Parse, finals: ReadonlySet<string>): ProjectAliases {
  const aliases = new Map<string, string>();
  const names = [...finals].filter((f) => /^\w+$/.test(f)).join('|');
  if (!names) return aliases;
  const assigns = new RegExp(`^[A-Za-z_]\\w*\\s*=\\s*[A-Za-z_][\\w.]*\\.(?:${names})\\s*$`, 'm');
  // A library rooted like torch (torch, torchvision, torch_scatter), not the project's own modules:
  // inside torch_scatter, `from .scatter import scatter_sum` re-exports the project's function, which
  // rules know by its public name.
  const own = new Set(files.flatMap((f) => (f.module ? [f.module.split('.')[0]!] : [])));
  const wanted = (target: string) => target.startsWith('torch') && !own.has(target.split('.')[0]!) && finals.has(target.slice(target.lastIndexOf('.') + 1));
  for (const file of files) {
    if (!file.module) continue;
    for (const [local, target] of fromImports(file)) if (wanted(target)) aliases.set(`${file.module}.${local}`, target);
    if (assigns.test(file.text)) for (const [name, target] of assignedNames(file, parse)) if (wanted(target)) aliases.set(name, target);
    if (KERNEL_IMPORT.test(file.text)) for (const [local, target] of kernelModuleImports(file, parse)) aliases.set(`${file.module}.${local}`, target);
  }
  if (aliases.size === 0) return aliases;
  // Re-exports of those names (`from .wrappers import interpolate` in a package's __init__.py), in rounds.
  for (let round = 0; round < MAX_ROUNDS; round++) {
    let added = false;
    for (const file of files) {
      if (!file.module) continue;
      for (const [local, target] of fromImports(file)) {
        const resolved = aliases.get(target);
        const name = `${file.module}.${local}`;
        if (resolved && !aliases.has(name)) {
          aliases.set(name, resolved);
          added = true;
        }
      }
    }
    if (!added) break;
  }
  return aliases;
}

/**
 * Kernel languages a project imports once and re-exports (`try: import triton.language as tl` /
 * `except ImportError: tl = MagicMock()` in `pkg/_triton.py`, then `from pkg._triton import tl,
 * triton` in each kernel file): the module the import binds. A stub assigned in the failure branch
 * is no rebinding of the real module: only import statements are read.
 */
const KERNEL_MODULE = /^triton(\.language)?$/;
const KERNEL_IMPORT = /^[ \t]*(?:import[ \t]+triton\b|from[ \t]+triton[ \t]+import[ \t])/m;

/** The module-level (also under `try:` / `if`) imports of a kernel language's modules, as [local name, module]. */
function kernelModuleImports(file: AliasSource, parse: Parse): Array<[string, string]> {
  const tree = parse(file.text);
  try {
    const out: Array<[string, string]> = [];
    for (const statement of tree.rootNode.descendantsOfType(['import_statement', 'import_from_statement'])) {
      if (insideDefinition(statement)) continue;
      for (const [local, target] of importBindingsOf(statement)) if (KERNEL_MODULE.test(target)) out.push([local, target]);
    }
    return out;
  } finally {
    tree.delete();
  }
}

function insideDefinition(node: Node): boolean {
  for (let p = node.parent; p; p = p.parent) if (p.type === 'function_definition' || p.type === 'class_definition') return true;
  return false;
}

/** The modules and packages holding an alias, per alias map. */
const HELD = new WeakMap<ProjectAliases, Set<string>>();

/** Does the file import one of the aliases, or a module or package holding one (`from pkg import layers`)? */
export function importsAlias(file: AliasSource, aliases: ProjectAliases): boolean {
  if (aliases.size === 0 || !file.module) return false;
  let held = HELD.get(aliases);
  if (!held) {
    HELD.set(aliases, (held = new Set<string>()));
    for (const key of aliases.keys()) for (let i = key.indexOf('.'); i > 0; i = key.indexOf('.', i + 1)) held.add(key.slice(0, i));
  }
  return fromImports(file).some(([, target]) => aliases.has(target) || held.has(target));
}

const FROM_IMPORT = /^from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*(?:\\\n[^\n]*)*)/gm;

/** The module-level `from M import a, b as c` of a file, as [local name, absolute qualified name]. */
export function fromImports(file: AliasSource): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (!file.text.includes('import')) return out;
  for (const match of file.text.matchAll(FROM_IMPORT)) {
    const module = absoluteName(match[1]!, file.module, file.isPackage);
    if (!module) continue;
    const list = match[2]!.replace(/#[^\n]*/g, '').replace(/[()\\]/g, ' ');
    for (const item of list.split(',')) {
      const [name, alias] = item.trim().split(/\s+as\s+/);
      if (!name || !/^\w+$/.test(name) || (alias !== undefined && !/^\w+$/.test(alias))) continue;
      out.push([alias ?? name, canonicalName(module.endsWith('.') ? `${module}${name}` : `${module}.${name}`)]);
    }
  }
  return out;
}

/** Module-level `name = a.b` assignments resolved through the file's imports, as [qualified name, target]. */
function assignedNames(file: AliasSource, parse: Parse): Array<[string, string]> {
  const tree = parse(file.text);
  try {
    const scope = new ImportScope();
    const out: Array<[string, string]> = [];
    const statements = tree.rootNode.namedChildren;
    for (const statement of statements) {
      if (statement.type === 'import_statement' || statement.type === 'import_from_statement') scope.addImport(statement);
    }
    for (const statement of statements) {
      const assignment = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
      if (assignment?.type !== 'assignment') continue;
      const left = assignment.childForFieldName('left');
      const right = assignment.childForFieldName('right');
      if (left?.type !== 'identifier' || !right || !dottedParts(right)) continue;
      const target = scope.resolveExpression(right);
      if (target) out.push([`${file.module}.${left.text}`, target]);
    }
    return out;
  } finally {
    tree.delete();
  }
}
