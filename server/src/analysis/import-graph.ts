// Which of a workspace's files an entry script reaches through its imports: the files a diverging
// pair's command really runs, whose findings are the suspects (DESIGN "The sidebar", issue 11). Every
// import statement counts, also one under a condition or in a function (an over-approximation, as
// program.ts's call edges are); imports that resolve outside the search roots (site-packages, torch)
// are not followed. Resolution follows Python's: `import a.b` runs a/__init__.py and a/b.py (or
// a/b/__init__.py); `from a import b` also reaches a/b.py when b is a submodule; `from .m import x`
// resolves against the importing file's package.
import path from 'node:path';
import type { Node } from 'web-tree-sitter';

/** One import statement's target: the module named (dotted, '' for `from . import x`), its level of leading dots, the names imported from it. */
export interface ImportSpec {
  module: string;
  level: number;
  names: string[];
}

/** A reached file, with the file whose import reached it first (breadth first: fewest imports away). */
export interface ReachedFile {
  file: string;
  depth: number;
  importedBy?: string;
}

/** The file system as the walk needs it (real in the CLI, a map in tests). */
export interface ModuleFiles {
  isFile(file: string): boolean;
  read(file: string): string | undefined;
}

/** Every import statement's target in a parsed file, in source order. */
export function importsOf(root: Node): ImportSpec[] {
  const specs: ImportSpec[] = [];
  const visit = (node: Node): void => {
    if (node.type === 'import_statement') {
      for (const child of node.namedChildren) {
        const name = child.type === 'aliased_import' ? child.childForFieldName('name') : child;
        if (name?.type === 'dotted_name') specs.push({ module: compact(name.text), level: 0, names: [] });
      }
      return;
    }
    if (node.type === 'import_from_statement') {
      const moduleNode = node.childForFieldName('module_name');
      if (!moduleNode) return;
      const text = compact(moduleNode.text);
      const level = /^\.*/.exec(text)![0].length;
      const names = node.childrenForFieldName('name').map((c) => compact((c.type === 'aliased_import' ? c.childForFieldName('name') : c)?.text ?? ''));
      specs.push({ module: text.slice(level), level, names: names.filter(Boolean) });
      return;
    }
    // Imports sit in statements, never inside expressions: skip the nodes that cannot hold one.
    for (const child of node.namedChildren) if (child.type.endsWith('statement') || child.type.endsWith('definition') || child.type === 'block' || child.type.endsWith('clause')) visit(child);
  };
  visit(root);
  return specs;
}

/** The files an import runs, found under `roots` (for an absolute import) or the importer's package (relative). */
export function resolveImport(spec: ImportSpec, importer: string, roots: readonly string[], files: ModuleFiles): string[] {
  const bases = spec.level > 0 ? [relativeBase(importer, spec.level)] : roots;
  for (const base of bases) {
    const parts = spec.module ? spec.module.split('.') : [];
    const found: string[] = [];
    let dir = base;
    let complete = true;
    for (const [i, part] of parts.entries()) {
      const module = moduleFile(path.join(dir, part), files);
      if (!module) {
        complete = false;
        break;
      }
      found.push(module);
      dir = path.join(dir, part);
      // A plain module ends the chain: `a.b.c` where a/b.py is a file cannot have a deeper part.
      if (!module.endsWith('__init__.py') && i < parts.length - 1) {
        complete = false;
        break;
      }
    }
    if (!complete) continue;
    // `from pkg import sub`: a submodule named in the list runs too.
    for (const name of spec.names) {
      const sub = name === '*' ? undefined : moduleFile(path.join(dir, name), files);
      if (sub) found.push(sub);
    }
    if (found.length > 0) return found;
  }
  return [];
}

/**
 * The files `entries` reach through imports, breadth first (entries at depth 0), each once. `roots`:
 * where absolute imports are looked up (the entry's folder, the workspace root, its `src/`).
 */
export function reachableFiles(entries: readonly string[], roots: (entry: string) => readonly string[], files: ModuleFiles, parse: (text: string) => ImportSpec[]): ReachedFile[] {
  const reached = new Map<string, ReachedFile>();
  const queue: Array<{ file: string; entry: string }> = [];
  for (const entry of entries) {
    if (reached.has(entry)) continue;
    reached.set(entry, { file: entry, depth: 0 });
    queue.push({ file: entry, entry });
  }
  for (let next = 0; next < queue.length; next++) {
    const { file, entry } = queue[next]!;
    const text = files.read(file);
    if (text === undefined) continue;
    const depth = reached.get(file)!.depth + 1;
    for (const spec of parse(text)) {
      for (const target of resolveImport(spec, file, roots(entry), files)) {
        if (reached.has(target)) continue;
        reached.set(target, { file: target, depth, importedBy: file });
        queue.push({ file: target, entry });
      }
    }
  }
  return [...reached.values()];
}

/** Python's module file for a dotted part: `x.py`, else the package `x/__init__.py`. */
function moduleFile(stem: string, files: ModuleFiles): string | undefined {
  if (files.isFile(`${stem}.py`)) return `${stem}.py`;
  const init = path.join(stem, '__init__.py');
  return files.isFile(init) ? init : undefined;
}

/** `from .x` in pkg/mod.py is pkg/x; each further dot climbs one package. */
function relativeBase(importer: string, level: number): string {
  let dir = path.dirname(importer);
  for (let i = 1; i < level; i++) dir = path.dirname(dir);
  return dir;
}

function compact(text: string): string {
  return text.replace(/\s+/g, '');
}
