// Compiled CUDA extensions: a Python call `group_norm_ext.backward(...)` runs the C++ function the
// extension's pybind module binds to `backward`, and whatever kernels that reaches. Kernel
// libraries keep those sources next to the Python (`setup.py`: `CUDAExtension(name="group_norm_ext",
// sources=["csrc/gn.cpp", "csrc/gn_kernel.cu"])`). This module reads, at the regex level, which
// exported functions reach a float atomic add (cuda-scan.ts types it) through the functions the
// sources define. It is not a C++ parser: a function is reached when a reached body names it (a
// call, a launch `k<<<...>>>`, a pointer passed to a launch macro), an over-approximation kept
// inside one extension's own files. Pure: the CLI and the server's workspace check read the files (workspace/extension-sources.ts).
import type { Node } from 'web-tree-sitter';
import { accumulatedType, CAtomic, CType, declaredTypeIn, findAtomics } from './rules/kernels/cuda-scan.js';
import { literalValue } from './syntax.js';

/** `CUDAExtension(name=..., sources=[...])` in a build script: the module and its source paths. */
export interface ExtensionDeclaration {
  /** The module's dotted name as Python imports it (`pkg._C`, `fused_ext`). */
  name: string;
  /** Paths and glob patterns relative to the build script's folder. */
  sources: string[];
  /** Built by `load(...)` where the script runs, not installed by a setup script. */
  jit?: boolean;
}

/** A float (or untyped) atomic add that an exported function reaches. */
export interface CompiledAtomic {
  /** Source file, as the caller named it, and the 1-based line of the atomic. */
  path: string;
  line: number;
  /** `atomicAdd`, `gpuAtomicAdd`... */
  atomic: string;
  /** The C++ function holding it (the kernel). */
  kernel: string;
  type: 'float' | 'unknown';
  /** The sources call alertNotDeterministic: torch's deterministic mode makes the extension raise. */
  alerts: boolean;
}

const EXTENSION_CALLS = /^(CUDAExtension|CppExtension|Pybind11Extension|load)$/;
const SOURCE_FILE = /\.(cu|cpp|cc|cxx|c)$/;

/** The extensions a build script declares (`setup.py`, or a `load(name=..., sources=...)` call). */
export function extensionDeclarations(root: Node): ExtensionDeclaration[] {
  const out: ExtensionDeclaration[] = [];
  const classes = extensionClassNames(root);
  for (const call of root.descendantsOfType('call')) {
    const fn = call.childForFieldName('function');
    const written = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : fn?.text;
    const last = written && (EXTENSION_CALLS.test(written) ? written : classes.get(written));
    if (!last) continue;
    const args = call.childForFieldName('arguments')?.namedChildren ?? [];
    const keyword = (k: string) => args.find((a) => a.type === 'keyword_argument' && a.childForFieldName('name')?.text === k)?.childForFieldName('value');
    const positional = args.filter((a) => a.type !== 'keyword_argument' && a.type !== 'comment');
    const name = literalValue(keyword('name') ?? positional[0] ?? null);
    const sources = keyword('sources') ?? (last === 'load' ? undefined : positional[1]);
    if (typeof name !== 'string' || !/^[A-Za-z_][\w.]*$/.test(name) || !sources) continue;
    const paths = pathStrings(sources, root, new Set()).filter((p) => SOURCE_FILE.test(p) || p.includes('*'));
    if (paths.length) out.push({ name, sources: [...new Set(paths)], ...(last === 'load' ? { jit: true } : {}) });
  }
  return out;
}

/**
 * Names bound to an extension class in the script (`extension = CppExtension`, later
 * `extension = CUDAExtension` when CUDA is found): a call of the name declares a module as the class
 * does. Every binding must be such a class; the CUDA one is kept, as a GPU build makes it.
 */
function extensionClassNames(root: Node): Map<string, string> {
  const bound = new Map<string, string | null>();
  for (const a of root.descendantsOfType('assignment')) {
    const left = a.childForFieldName('left');
    if (left?.type !== 'identifier' || EXTENSION_CALLS.test(left.text)) continue;
    const right = a.childForFieldName('right');
    const cls = right?.type === 'attribute' ? right.childForFieldName('attribute')?.text : right?.type === 'identifier' ? right.text : undefined;
    const value = cls && cls !== 'load' && EXTENSION_CALLS.test(cls) ? cls : null;
    const previous = bound.get(left.text);
    bound.set(left.text, previous === undefined ? value : previous === null || value === null ? null : value === 'CUDAExtension' ? value : previous);
  }
  return new Map([...bound].filter((e): e is [string, string] => e[1] !== null));
}

/**
 * The path strings an expression builds: literals, `os.path.join` parts, glob patterns, names bound
 * to them. A name being resolved reads as nothing inside itself (`srcs = [join(d, s) for s in srcs]`).
 */
function pathStrings(node: Node, root: Node, resolving: Set<string>): string[] {
  const next = (n: Node | null | undefined) => (n ? pathStrings(n, root, resolving) : []);
  switch (node.type) {
    case 'string': {
      const value = literalValue(node);
      return typeof value === 'string' ? [value] : [];
    }
    case 'call': {
      const fn = node.childForFieldName('function')?.text ?? '';
      const args = node.childForFieldName('arguments')?.namedChildren ?? [];
      // `os.path.join(this_dir, "csrc", "k.cu")`: the literal parts, from the build script's folder.
      // A part bound to one path (`extensions_dir = os.path.join(this_dir, "pkg", "csrc")`) is that
      // path; one bound to none (`this_dir = os.path.dirname(__file__)`) is the script's folder.
      if (/(^|\.)join$/.test(fn) && args.length > 1) {
        const parts = args.map((a) => {
          const value = literalValue(a);
          if (typeof value === 'string' || a.type !== 'identifier') return value;
          const bound = [...new Set(next(a))];
          return bound.length === 1 ? bound[0] : undefined;
        });
        const last = parts.at(-1);
        if (typeof last === 'string') return [parts.filter((p): p is string => typeof p === 'string').join('/')];
      }
      return args.flatMap((a) => next(a));
    }
    case 'identifier': {
      // `srcs = [...]`, `srcs += [...]`, `srcs.append(...)` anywhere in the script.
      if (resolving.has(node.text)) return [];
      resolving.add(node.text);
      const found: string[] = [];
      for (const a of root.descendantsOfType(['assignment', 'augmented_assignment'])) {
        if (a.childForFieldName('left')?.text === node.text) found.push(...next(a.childForFieldName('right')));
      }
      for (const c of root.descendantsOfType('call')) {
        const fn = c.childForFieldName('function');
        if (fn?.type === 'attribute' && fn.childForFieldName('object')?.text === node.text && /^(append|extend)$/.test(fn.childForFieldName('attribute')?.text ?? '')) {
          found.push(...(c.childForFieldName('arguments')?.namedChildren ?? []).flatMap((a) => next(a)));
        }
      }
      resolving.delete(node.text);
      return found;
    }
    case 'keyword_argument':
    case 'comment':
      return [];
    default:
      return node.namedChildren.flatMap((c) => next(c));
  }
}

export interface SourceText {
  path: string;
  text: string;
}

interface CFunction {
  name: string;
  file: SourceText;
  /** The name through the end of the body, in the file's code text (comments and strings blanked). */
  start: number;
  end: number;
  mentions: Set<string>;
}

const C_CONTROL = new Set(['if', 'constexpr', 'for', 'while', 'switch', 'catch', 'return', 'sizeof', 'decltype', 'alignof', 'static_assert', 'defined', '__launch_bounds__', '__attribute__', 'alignas']);
// A name, template arguments (one level of nesting: `run_bwd_<cutlass::half_t, 128>`), parameters.
const DEFINITION = /\b([A-Za-z_]\w*)\s*(?:<[^;{}()<>]*(?:<[^;{}()<>]*>[^;{}()<>]*)*>\s*)?\(/g;
/** `DEFINE_BWD_KERNEL(kernel_name, ...) { ... }`: a macro that writes a kernel's signature, named by its first argument. */
const MACRO_NAME = /^[A-Z][A-Z0-9_]*$/;
const AFTER_PARAMETERS = /^\s*(?:(?:const|noexcept|override|final|mutable|volatile|&|&&)\s*)*(?:->\s*[\w:<>,\s*&]+?\s*)?\{/;
const INCLUDE = /^[ \t]*#[ \t]*include[ \t]*"([^"]+)"/gm;

/** `#include "x.h"` paths of a source file, as written. */
export function localIncludes(text: string): string[] {
  return [...text.matchAll(INCLUDE)].map((m) => m[1]!);
}

/**
 * The functions each pybind export (`m.def("name", &fn)` in `PYBIND11_MODULE(..., m)`) reaches, and
 * the first float atomic add among them (else an untyped one). Exports that reach none are absent.
 */
export function compiledExports(files: readonly SourceText[]): Map<string, CompiledAtomic> {
  const codes = files.map((file) => ({ file, commentless: blankComments(file.text) })).map((f) => ({ ...f, code: blankStrings(f.commentless) }));
  const functions = new Map<string, CFunction[]>();
  for (const { file, code } of codes) {
    for (const fn of definitionsIn(file, code)) {
      const list = functions.get(fn.name);
      if (list) list.push(fn);
      else functions.set(fn.name, [fn]);
    }
  }
  const allCode = codes.map((c) => c.code).join('\n');
  const alerts = /alertNotDeterministic/.test(allCode);
  const atomicsOf = new Map<CFunction, CompiledAtomic | undefined>();
  const firstAtomic = (fn: CFunction): CompiledAtomic | undefined => {
    if (atomicsOf.has(fn)) return atomicsOf.get(fn);
    const entry = codes.find((c) => c.file === fn.file)!;
    const body = entry.code.slice(fn.start, fn.end);
    // A name's type from the kernel's own parameters and locals first, then anywhere in its file.
    const local = declaredTypeIn(body, allCode);
    const fileWide = declaredTypeIn(entry.code, allCode);
    const typeOf = (name: string): CType => {
      const t = local(name);
      return t === 'unknown' ? fileWide(name) : t;
    };
    let found: CompiledAtomic | undefined;
    for (const atomic of findAtomics(body)) {
      const type = atomic.adds ? accumulatedType(atomic, typeOf) : 'int';
      if (type === 'int') continue;
      const line = lineOf(entry.code, fn.start + atomic.start);
      if (!found || (found.type === 'unknown' && type === 'float')) found = at(fn, atomic, line, type, alerts);
      if (type === 'float') break;
    }
    atomicsOf.set(fn, found);
    return found;
  };

  const exports = new Map<string, CompiledAtomic>();
  for (const { code, commentless } of codes) {
    for (const [name, target] of pybindExports(commentless)) {
      const reached = reach(mentionsOf(code.slice(target.start, target.end)), functions);
      let best: CompiledAtomic | undefined;
      for (const fn of reached) {
        const a = firstAtomic(fn);
        if (a && (!best || (best.type === 'unknown' && a.type === 'float'))) best = a;
        if (best?.type === 'float') break;
      }
      const previous = exports.get(name);
      if (best && (!previous || (previous.type === 'unknown' && best.type === 'float'))) exports.set(name, best);
    }
  }
  return exports;
}

function at(fn: CFunction, atomic: CAtomic, line: number, type: 'float' | 'unknown', alerts: boolean): CompiledAtomic {
  return { path: fn.file.path, line, atomic: atomic.name, kernel: fn.name, type, alerts };
}

const MAX_REACHED = 5000;

/** The functions named from `roots`, and those their bodies name, breadth first. */
function reach(roots: Set<string>, functions: ReadonlyMap<string, CFunction[]>): CFunction[] {
  const seen = new Set<string>();
  const out: CFunction[] = [];
  const queue = [...roots];
  while (queue.length && out.length < MAX_REACHED) {
    const name = queue.shift()!;
    if (seen.has(name)) continue;
    seen.add(name);
    for (const fn of functions.get(name) ?? []) {
      out.push(fn);
      for (const m of fn.mentions) if (!seen.has(m) && functions.has(m)) queue.push(m);
    }
  }
  return out;
}

function definitionsIn(file: SourceText, code: string): CFunction[] {
  const out: CFunction[] = [];
  for (const match of code.matchAll(DEFINITION)) {
    const name = match[1]!;
    if (C_CONTROL.has(name)) continue;
    const before = code.slice(Math.max(0, match.index! - 2), match.index!);
    if (/(\.|->)\s*$/.test(before)) continue;
    const open = match.index! + match[0].length - 1;
    const close = matching(code, open, '(', ')');
    if (close === -1) continue;
    const after = AFTER_PARAMETERS.exec(code.slice(close + 1, close + 200));
    if (!after) continue;
    const brace = close + after[0].length;
    const end = matching(code, brace, '{', '}');
    if (end === -1) continue;
    const fn = { name, file, start: match.index!, end: end + 1, mentions: mentionsOf(code.slice(brace, end)) };
    out.push(fn);
    const first = MACRO_NAME.test(name) ? /^\s*([A-Za-z_]\w*)\s*,/.exec(code.slice(open + 1, close))?.[1] : undefined;
    if (first) out.push({ ...fn, name: first });
  }
  return out;
}

function mentionsOf(text: string): Set<string> {
  return new Set(text.match(/\b[A-Za-z_]\w*\b/g) ?? []);
}

/** `m.def("name", <target>, ...)` on the module variable of `PYBIND11_MODULE(NAME, m)`: name → the target's text span. */
function pybindExports(commentless: string): Array<[string, { start: number; end: number }]> {
  const out: Array<[string, { start: number; end: number }]> = [];
  for (const module of commentless.matchAll(/\bPYBIND11_MODULE\s*\(\s*\w+\s*,\s*(\w+)\s*\)\s*\{/g)) {
    const open = module.index! + module[0].length - 1;
    const close = matching(commentless, open, '{', '}');
    if (close === -1) continue;
    const body = commentless.slice(open, close);
    const def = new RegExp(`\\b${module[1]}\\s*\\.\\s*def\\s*\\(\\s*"([A-Za-z_]\\w*)"\\s*,`, 'g');
    for (const d of body.matchAll(def)) {
      const start = open + d.index! + d[0].length;
      const paren = open + d.index! + d[0].indexOf('(');
      const end = matching(commentless, paren, '(', ')');
      if (end !== -1) out.push([d[1]!, { start, end }]);
    }
  }
  return out;
}

function matching(code: string, open: number, o: string, c: string): number {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    const ch = code[i];
    if (ch === o) depth++;
    else if (ch === c && --depth === 0) return i;
  }
  return -1;
}

function lineOf(code: string, offset: number): number {
  let line = 1;
  for (let i = code.indexOf('\n'); i !== -1 && i < offset; i = code.indexOf('\n', i + 1)) line++;
  return line;
}

/** Comments and preprocessor lines (with their continuations) as spaces, offsets kept. */
function blankComments(text: string): string {
  const blank = (m: string) => m.replace(/[^\n]/g, ' ');
  return text.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, blank).replace(/^[ \t]*#(?:[^\n]*\\\n)*[^\n]*/gm, (m) => (/^\s*#\s*include/.test(m) ? m : blank(m)));
}

/** String and character literals as spaces (a brace or a name inside one is not code). */
function blankStrings(text: string): string {
  return text.replace(/"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'/g, (m) => m.replace(/[^\n]/g, ' '));
}
