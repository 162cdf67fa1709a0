// Sources of operator libraries no build script names (built by CMake, or by a setup.py bitexact
// cannot read): when Python calls `torch.ops.<ns>.<op>` and no declared extension registers `ns`,
// the project's C++ / CUDA files that register operators in `ns` are found by a bounded walk from
// the project's folder, and the library is every source under the folder those files share.
import fs from 'node:fs';
import path from 'node:path';
import { registeredNamespaces } from '../analysis/op-registrations.js';

/** Folders a library's own sources never sit in (vendored code, builds, environments). */
const SKIPPED_DIRS = /^(\..*|node_modules|__pycache__|build|dist|site-packages|venv|env|third_party|third-party|thirdparty|3rdparty|external|externals|vendor)$/;
const SOURCE = /\.(cu|cpp|cc|cxx|c)$/;
const HEADER = /\.(cuh|h|hh|hpp)$/;
/** Bounds on the walk: folders visited, deepest level, files read to look for registrations, bytes per file. */
const MAX_DIRS = 4000;
const MAX_DEPTH = 10;
const MAX_READ = 3000;
const MAX_FILE_BYTES = 2 << 20;

/** Namespaces of torch itself and methods of `torch.ops`: no project registers them. */
const TORCH_NAMESPACES = /^(aten|prim|prims|quantized|_quantized|profiler|higher_order|c10d|_c10d_functional\w*|_dtensor|inductor|_inductor\w*|mkldnn|mkl|onednn|cudnn|rngprims|debugprims|symm_mem|streams|load_library|import_module|loaded_libraries)$/;

/** The custom namespaces Python code calls through `torch.ops`. */
export function calledNamespaces(texts: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const text of texts) {
    if (!text.includes('torch.ops.')) continue;
    for (const m of text.matchAll(/\btorch\.ops\.([A-Za-z_]\w*)/g)) if (!TORCH_NAMESPACES.test(m[1]!)) out.add(m[1]!);
  }
  return out;
}

/**
 * For each of `namespaces` some source under `root` registers: the library's files (absolute),
 * the registering ones first, then the other sources and headers under their common folder.
 */
export function operatorLibraries(root: string, namespaces: ReadonlySet<string>): Map<string, string[]> {
  const sources: string[] = [];
  const headers: string[] = [];
  let dirs = 0;
  const walk = (dir: string, depth: number) => {
    if (depth > MAX_DEPTH || ++dirs > MAX_DIRS) return;
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (e.isDirectory()) {
        if (!SKIPPED_DIRS.test(e.name)) walk(path.join(dir, e.name), depth + 1);
      } else if (e.isFile() && SOURCE.test(e.name)) sources.push(path.join(dir, e.name));
      else if (e.isFile() && HEADER.test(e.name)) headers.push(path.join(dir, e.name));
    }
  };
  walk(root, 0);
  const registering = new Map<string, string[]>();
  for (const file of sources.slice(0, MAX_READ)) {
    let text: string;
    try {
      if (fs.statSync(file).size > MAX_FILE_BYTES) continue;
      text = fs.readFileSync(file, 'utf8');
    } catch {
      continue;
    }
    if (!text.includes('TORCH_LIBRARY') && !text.includes('RegisterOperators')) continue;
    for (const ns of registeredNamespaces(text)) if (namespaces.has(ns)) registering.set(ns, [...(registering.get(ns) ?? []), file]);
  }
  const out = new Map<string, string[]>();
  for (const [ns, files] of registering) {
    const folder = commonFolder(files);
    const inside = (f: string) => f.startsWith(folder + path.sep);
    out.set(ns, [...new Set([...files, ...sources.filter(inside), ...headers.filter(inside)])]);
  }
  return out;
}

/** The deepest folder holding every one of `files`. */
export function commonFolder(files: readonly string[]): string {
  let folder = path.dirname(files[0]!);
  while (!files.every((f) => f.startsWith(folder + path.sep)) && path.dirname(folder) !== folder) folder = path.dirname(folder);
  return folder;
}
