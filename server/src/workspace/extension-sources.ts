// Reads the sources of the compiled extensions a project's Python imports (`bitexact check`):
// build scripts declare them (compiled-extensions.ts extensionDeclarations), and only a module some
// Python file imports has its `.cpp` / `.cu` files and local headers read. Operators registered with
// the dispatcher are called as `torch.ops.<ns>.<op>`: a declared extension registering them is read
// when Python calls that namespace, and a namespace no declared extension registers is looked for
// in the project's own C++ (op-library-sources.ts). A project with neither reads nothing beyond its Python.
import fs from 'node:fs';
import path from 'node:path';
import { CompiledAtomic, extensionDeclarations, localIncludes } from '../analysis/compiled-extensions.js';
import { compiledEntries } from '../analysis/compiled-reach.js';
import type { SourceText } from '../analysis/c-functions.js';
import type { Checker } from '../analysis/index.js';
import { calledNamespaces, commonFolder, operatorLibraries } from './op-library-sources.js';

export interface PythonFile {
  absolute: string;
  text: string;
}

// A class named anywhere, not only called: `extension = CUDAExtension` then `extension("pkg._C", srcs)`.
const BUILD_CALL = /\b(?:CUDAExtension|CppExtension|Pybind11Extension)\b|\bload\s*\([^)]*\bsources\s*=/;
/** Bounds on what one extension reads: its sources and their headers. */
const MAX_FILES = 400;
const MAX_BYTES = 16 << 20;

/**
 * `module.function` (and `torch.ops.ns.op`) → the float atomic add it reaches, for every extension
 * declared in `files`' build scripts and imported by one of them, and every operator namespace
 * they call. `display` names a source file in messages.
 */
export function compiledExtensions(checker: Checker, files: readonly PythonFile[], display: (absolute: string) => string): Map<string, CompiledAtomic> {
  const out = new Map<string, CompiledAtomic>();
  const namespaces = calledNamespaces(files.map((f) => f.text));
  const registered = new Set<string>();
  const addOps = (ops: ReadonlyMap<string, CompiledAtomic>) => {
    for (const [op, atomic] of ops) {
      const [ns, name] = op.split('::');
      registered.add(ns!);
      if (namespaces.has(ns!) && !out.has(`torch.ops.${ns}.${name}`)) out.set(`torch.ops.${ns}.${name}`, atomic);
    }
  };
  const scripts = files.filter((f) => BUILD_CALL.test(f.text));
  const declared = scripts.flatMap((script) => {
    const tree = checker.parser.parse(script.text);
    try {
      return extensionDeclarations(tree.rootNode).map((d) => ({ ...d, dir: path.dirname(script.absolute) }));
    } finally {
      tree.delete();
    }
  });
  const imported = declared.length ? importedModules(files, new Set(declared.map((d) => lastSegment(d.name)))) : new Set<string>();
  for (const decl of declared) {
    // A JIT `load(...)` builds the module where the script calls it; a setup.py's module must be
    // imported, or load operators (`torch.ops.load_library`) that Python calls.
    const isImported = decl.jit || imported.has(lastSegment(decl.name));
    if (!isImported && namespaces.size === 0) continue;
    const entries = compiledEntries(readSources(decl.dir, decl.sources, display));
    if (isImported) {
      for (const [fn, atomic] of entries.bound) {
        const key = `${decl.name}.${fn}`;
        if (!out.has(key)) out.set(key, atomic);
      }
    }
    addOps(entries.ops);
  }
  const unregistered = new Set([...namespaces].filter((ns) => !registered.has(ns)));
  if (unregistered.size && files.length) {
    for (const [, library] of operatorLibraries(commonFolder(files.map((f) => f.absolute)), unregistered)) addOps(compiledEntries(readSources('/', library, display)).ops);
  }
  return out;
}

function lastSegment(name: string): string {
  return name.slice(name.lastIndexOf('.') + 1);
}

/** The last segments of `names` that some file imports (`import ext`, `from pkg import ext`, `import pkg.ext as e`). */
function importedModules(files: readonly PythonFile[], names: ReadonlySet<string>): Set<string> {
  const words = [...names].join('|');
  const re = new RegExp(`^[ \\t]*(?:import[ \\t]+[\\w.]*\\b(${words})\\b|from[ \\t]+[\\w.]*\\b(${words})\\b[ \\t]+import|from[ \\t]+[\\w.]+[ \\t]+import[^\\n]*\\b(${words})\\b)`, 'gm');
  const found = new Set<string>();
  for (const file of files) {
    if (!file.text.includes('import')) continue;
    for (const m of file.text.matchAll(re)) found.add(m[1] ?? m[2] ?? m[3]!);
  }
  return found;
}

/** The listed sources (globs expanded), then the local headers they include, breadth first, within bounds. */
function readSources(dir: string, listed: readonly string[], display: (absolute: string) => string): SourceText[] {
  const queue = listed.flatMap((p) => (p.includes('*') ? expandGlob(path.resolve(dir, p)) : [path.resolve(dir, p)]));
  const sourceDirs = [...new Set(queue.map((p) => path.dirname(p)))];
  const seen = new Set<string>();
  const out: SourceText[] = [];
  let bytes = 0;
  while (queue.length && out.length < MAX_FILES && bytes < MAX_BYTES) {
    const file = queue.shift()!;
    if (seen.has(file)) continue;
    seen.add(file);
    let text: string;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    bytes += text.length;
    out.push({ path: display(file), text });
    for (const include of localIncludes(text)) {
      const candidates = [path.dirname(file), ...sourceDirs].map((d) => path.resolve(d, include));
      const found = candidates.find((c) => !seen.has(c) && isFile(c));
      if (found) queue.push(found);
    }
  }
  return out;
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** `csrc/ext/*.cu` (a wildcard in the last segment, or `**` for any depth below). */
function expandGlob(pattern: string): string[] {
  const parts = pattern.split(path.sep);
  const star = parts.findIndex((p) => p.includes('*'));
  const base = parts.slice(0, star).join(path.sep) || path.sep;
  const rest = parts.slice(star);
  const glob = rest.join('/');
  const re = new RegExp(`^${glob.split('**/').map((seg) => seg.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '[^/]*')).join('(?:.*/)?')}$`);
  // Below the base only as deep as the pattern reaches.
  const deep = glob.includes('**') ? 6 : rest.length - 1;
  const out: string[] = [];
  const walk = (d: string, rel: string, depth: number) => {
    if (depth > deep) return;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path.join(d, e.name), r, depth + 1);
      else if (re.test(r)) out.push(path.join(d, e.name));
    }
  };
  walk(base, '', 0);
  return out;
}
