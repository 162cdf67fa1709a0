// What a whole-model compile reaches (docs/real-code.md § "Compiled models"): the classes and
// functions of the project that a compiling script imports by name, where they are defined. A
// model's layers are compiled with it only when the compiling script builds that model, and it
// builds it from a name it imports; a project-wide answer would take the embedding of every model
// in a repository for compiled because one experiment's trainer compiles its own. Imports are read
// from the text (`from .m import x, y`, parenthesised lists), by the files' dotted module names
// (module-names.ts); every import counts, also a conditional one (an over-approximation).
import { absoluteName } from './module-names.js';
import type { SourceFile } from './program-reader.js';

const FROM_IMPORT = /^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]*)/gm;

/** Every class and function of a compiling file counts as compiled: it builds its model itself. */
export const ALL_NAMES = '*';

/** The names a file imports from each module: `from m import A, B as C` gives m → A, B. */
function namesImported(file: Pick<SourceFile, 'text' | 'module' | 'isPackage'>): Array<[module: string, name: string]> {
  const found: Array<[string, string]> = [];
  if (!file.text.includes('import')) return found;
  for (const m of file.text.matchAll(FROM_IMPORT)) {
    const base = m[1] ? absoluteName(`${m[1]}${m[2]}`, file.module, file.isPackage) : m[2]!;
    if (!base) continue;
    for (const raw of m[3]!.replace(/[()]/g, '').split(',')) {
      const name = raw.trim().split(/\s+/)[0];
      if (name && /^\w+$/.test(name)) found.push([base, name]);
    }
  }
  return found;
}

/**
 * For each file, the names of its classes and functions that a whole-model compile builds: every
 * name (ALL_NAMES) in a file that compiles (`compiling[i]`), and in other files the names a
 * compiling file imports from them, followed through re-exports (`from .model import GPT` in a
 * package's `__init__`). The model a script compiles is one it builds from a name it imports; a
 * file merely imported on the way (a package's `__init__`, a config module) builds nothing of it.
 */
export function namesCompiled(files: readonly SourceFile[], compiling: readonly boolean[]): Array<ReadonlySet<string> | undefined> {
  const names: Array<Set<string> | undefined> = compiling.map((c) => (c ? new Set([ALL_NAMES]) : undefined));
  if (!names.some(Boolean)) return names;
  const byModule = new Map<string, number>();
  // A `src/` layout's modules are imported without the `src.` its path gives them.
  files.forEach((f, i) => f.module && byModule.set(f.module, i).set(f.module.replace(/^src\./, ''), i));
  const imports = new Map<number, Array<[string, string]>>();
  const importsOf = (i: number) => imports.get(i) ?? imports.set(i, namesImported(files[i]!)).get(i)!;
  const queue: Array<[file: number, name: string | undefined]> = files.flatMap((_, i) => (compiling[i] ? [[i, undefined] as [number, undefined]] : []));
  while (queue.length) {
    const [i, wanted] = queue.pop()!;
    for (const [module, name] of importsOf(i)) {
      // A compiling file passes on every name it imports; another file only the names asked of it.
      if (wanted !== undefined && name !== wanted) continue;
      // `from pkg import sub` names a submodule: the names sub defines are not followed further.
      const j = byModule.get(module);
      if (j === undefined) continue;
      const known = (names[j] ??= new Set());
      if (known.has(name) || known.has(ALL_NAMES)) continue;
      known.add(name);
      queue.push([j, name]);
    }
  }
  return names;
}
