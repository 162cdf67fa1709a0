// Compiled CUDA extensions: a Python call `group_norm_ext.backward(...)` runs the C++ function the
// extension's pybind module binds to `backward`, and whatever kernels that reaches. Kernel
// libraries keep those sources next to the Python (`setup.py`: `CUDAExtension(name="group_norm_ext",
// sources=["csrc/gn.cpp", "csrc/gn_kernel.cu"])`). This module reads the build scripts' declarations;
// compiled-reach.ts follows each entry point of the sources to its first float atomic add. Pure: the
// CLI and the server's workspace check read the files (workspace/extension-sources.ts).
import type { Node } from 'web-tree-sitter';
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
  /** Reached only through the `backward` of a C++ autograd Function: runs only when a gradient flows back. */
  backwardOnly?: boolean;
  /** An ATen op called from C++ (`grad.scatter_add_(...)`), which deterministic mode makes deterministic. */
  aten?: boolean;
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

const INCLUDE = /^[ \t]*#[ \t]*include[ \t]*"([^"]+)"/gm;

/** `#include "x.h"` paths of a source file, as written. */
export function localIncludes(text: string): string[] {
  return [...text.matchAll(INCLUDE)].map((m) => m[1]!);
}
