// A project's own names for torch functions: a module that says `interpolate = F.interpolate` (or
// `from torch.nn.functional import interpolate`) at module level, re-exported by its package's
// `__init__.py` (`from .wrappers import interpolate`), lets other modules call
// `from pkg.layers import interpolate; interpolate(x, mode="bilinear")`: that is F.interpolate. The
// per-file analysis sees only a project name; this pass maps such names to what they stand for, so
// the files that import them are analysed with it (Checker.checkProgram, `bitexact check` only).
// Cheap where there is nothing: only files with a module-level `name = a.b` line are parsed.
import type { Node } from 'web-tree-sitter';
import { ImportScope, importBindingsOf } from './scope.js';
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
 * segments of the torch names rules call (`interpolate`): only those are worth an alias, and only
 * files that bind one of them at module level are parsed.
 */
export function projectAliases(files: readonly AliasSource[], parse: Parse, finals: ReadonlySet<string>): ProjectAliases {
  const aliases = new Map<string, string>();
  const names = [...finals].filter((f) => /^\w+$/.test(f)).join('|');
  if (!names) return aliases;
  const binds = new RegExp(`^[A-Za-z_]\\w*\\s*=\\s*[A-Za-z_][\\w.]*\\.(?:${names})\\s*$|^from\\s+torch[\\w.]*\\s+import\\s[^\\n]*\\b(?:${names})\\b`, 'm');
  const wanted = (target: string) => finals.has(target.slice(target.lastIndexOf('.') + 1));
  for (const file of files) {
    if (!file.module || !binds.test(file.text)) continue;
    for (const [name, target] of moduleLevelNames(file, parse, true)) if (wanted(target)) aliases.set(name, target);
  }
  if (aliases.size === 0) return aliases;
  // Re-exports of those names (`from .wrappers import interpolate` in a package's __init__.py), in rounds.
  for (let round = 0; round < MAX_ROUNDS; round++) {
    const finals = new Set([...aliases.keys()].map((k) => k.slice(k.lastIndexOf('.') + 1)));
    const word = new RegExp(`\\bimport\\b[^\\n]*\\b(${[...finals].join('|')})\\b|^\\s+(${[...finals].join('|')})\\b`, 'm');
    let added = false;
    for (const file of files) {
      if (!file.module || !word.test(file.text)) continue;
      for (const [name, target] of moduleLevelNames(file, parse, false)) {
        const resolved = aliases.get(target);
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
 * The module-level names of a file with what they are bound to (imports made absolute): with
 * `torchOnly`, only those that resolve to torch names, and module-level `x = a.b` assignments too.
 */
function moduleLevelNames(file: AliasSource, parse: Parse, torchOnly: boolean): Array<[string, string]> {
  const tree = parse(file.text);
  try {
    const scope = new ImportScope();
    const out: Array<[string, string]> = [];
    const statements = tree.rootNode.namedChildren;
    for (const statement of statements) {
      if (statement.type !== 'import_statement' && statement.type !== 'import_from_statement') continue;
      for (const [local, target] of importBindingsOf(statement)) {
        scope.addImportBinding([local, target]);
        const absolute = absoluteName(target, file.module, file.isPackage);
        if (absolute && (!torchOnly || absolute.startsWith('torch.'))) out.push([`${file.module}.${local}`, absolute]);
      }
    }
    if (!torchOnly) return out;
    for (const statement of statements) {
      const assignment = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
      if (assignment?.type !== 'assignment') continue;
      const left = assignment.childForFieldName('left');
      const right = assignment.childForFieldName('right');
      if (left?.type !== 'identifier' || !right || !dottedParts(right)) continue;
      const target = scope.resolveExpression(right);
      if (target?.startsWith('torch.')) out.push([`${file.module}.${left.text}`, target]);
    }
    return out;
  } finally {
    tree.delete();
  }
}
