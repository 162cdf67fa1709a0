// What a compiled library's entry points reach: each `m.def("name", &fn)` of a `PYBIND11_MODULE`,
// and each operator registered with the dispatcher (op-registrations.ts, `torch.ops.ns.op` from
// Python), is followed through the functions the sources define (c-functions.ts: calls, launches,
// kernels passed to macros, C++ dispatcher calls of other registered ops, the members of a C++
// autograd Function) to the first float atomic add among them, typed as cuda-scan.ts types one.
// A project's own add-like atomic (a device function or macro wrapping `atomicAdd`, a
// compare-and-swap loop doing float arithmetic) is an atomic where it is called, typed there; an
// ATen op that adds with atomics on CUDA (`grad.scatter_add_(...)`) counts in a backward, where its
// operands are gradients. A kernel reached only through an autograd backward is marked so.
import { accumulatedType, CType, declaredTypeIn, findAtomics } from './rules/kernels/c-atomics.js';
import { CFunction, codeText, CodeText, functionsOf, lineOf, macrosOf, matching, mentionsOf, SourceText } from './c-functions.js';
import type { CompiledAtomic } from './compiled-extensions.js';
import { dispatcherCalls, opRegistrations } from './op-registrations.js';

export interface CompiledEntries {
  /** Pybind exports that reach an atomic add, by the name the module binds. */
  bound: Map<string, CompiledAtomic>;
  /** Registered operators that reach one, by `ns::op`. */
  ops: Map<string, CompiledAtomic>;
}

/** ATen ops that accumulate with atomics on CUDA when deterministic mode is off (measured: index_add_, scatter_add_, index_select backward). */
const ATEN_ATOMIC = /(?:\.|\b(?:at|torch)\s*::\s*)(scatter_add_?|index_add_?|index_select_backward)\s*\(/g;
const BUILTIN_ATOMIC = /^(atomic(?:Add|Sub|Exch|Min|Max|Inc|Dec|CAS|And|Or|Xor)(?:_block|_system)?|gpuAtomicAdd(?:NoReturn)?|fastAtomicAdd|unsafeAtomicAdd)$/;
const MAX_REACHED = 5000;

export function compiledEntries(files: readonly SourceText[]): CompiledEntries {
  const codes = files.map(codeText);
  const functions = functionsOf(codes);
  for (const code of codes) addOperators(code, functions);
  const allCode = codes.map((c) => c.code).join('\n');
  const alerts = /alertNotDeterministic/.test(allCode);
  const { wrappers, ownType } = atomicWrappers(codes, functions);
  const atomicsOf = new Map<CFunction, CompiledAtomic | undefined>();
  const firstAtomic = (fn: CFunction): CompiledAtomic | undefined => {
    if (atomicsOf.has(fn)) return atomicsOf.get(fn);
    // An atomic's own definition (an overload of `atomicAdd`, a wrapper) is typed where it is called.
    if (BUILTIN_ATOMIC.test(fn.name) || wrappers.has(fn.name)) return undefined;
    const entry = codes.find((c) => c.file === fn.file)!;
    const body = entry.code.slice(fn.start, fn.end);
    // A name's type from the kernel's own parameters and locals first, then anywhere in its file.
    const local = declaredTypeIn(body, allCode, true);
    const fileWide = declaredTypeIn(entry.code, allCode, true);
    const typeOf = (name: string): CType => {
      const t = local(name);
      return t === 'unknown' ? fileWide(name) : t;
    };
    let found: CompiledAtomic | undefined;
    for (const atomic of findAtomics(body, wrappers)) {
      const typed = atomic.adds ? accumulatedType(atomic, typeOf) : 'int';
      const type = typed === 'unknown' ? (ownType.get(atomic.name) ?? typed) : typed;
      if (type === 'int') continue;
      const line = lineOf(entry.code, fn.start + atomic.start);
      if (!found || (found.type === 'unknown' && type === 'float')) found = at(fn, atomic.name, line, type, alerts);
      if (type === 'float') break;
    }
    if (found?.type !== 'float') {
      const aten = ATEN_ATOMIC.exec(body);
      ATEN_ATOMIC.lastIndex = 0;
      if (aten) found = { ...at(fn, aten[1]!, lineOf(entry.code, fn.start + aten.index!), fn.backward ? 'float' : 'unknown', false), aten: true };
    }
    atomicsOf.set(fn, found);
    return found;
  };
  const firstIn = (reached: CFunction[]): CompiledAtomic | undefined => {
    let best: CompiledAtomic | undefined;
    for (const fn of reached) {
      const a = firstAtomic(fn);
      if (a && (!best || (best.type === 'unknown' && a.type === 'float'))) best = a;
      if (best?.type === 'float') break;
    }
    return best;
  };
  // The forward path first; a float atomic found only past an autograd backward is marked so.
  const resolve = (roots: Set<string>): CompiledAtomic | undefined => {
    const forward = firstIn(reach(roots, functions, true));
    if (forward?.type === 'float') return forward;
    const any = firstIn(reach(roots, functions, false));
    return any && any !== forward && (!forward || any.type === 'float') ? { ...any, backwardOnly: true } : forward;
  };

  const bound = new Map<string, CompiledAtomic>();
  for (const { code, commentless } of codes) {
    for (const [name, target] of pybindExports(commentless)) keep(bound, name, resolve(mentionsOf(code.slice(target.start, target.end))));
  }
  const ops = new Map<string, CompiledAtomic>();
  for (const name of functions.keys()) if (name.includes('::') && functions.get(name)!.some((f) => f.operator)) keep(ops, name, resolve(new Set([name])));
  return { bound, ops };
}

function keep(into: Map<string, CompiledAtomic>, name: string, found: CompiledAtomic | undefined): void {
  const previous = into.get(name);
  if (found && (!previous || (previous.type === 'unknown' && found.type === 'float'))) into.set(name, found);
}

function at(fn: CFunction, atomic: string, line: number, type: 'float' | 'unknown', alerts: boolean): CompiledAtomic {
  return { path: fn.file.path, line, atomic, kernel: fn.name, type, alerts };
}

/**
 * Each registered operator as a function named `ns::op` whose mentions are its kernels' names, and
 * each function calling one through the dispatcher as mentioning it.
 */
function addOperators(code: CodeText, functions: Map<string, CFunction[]>): void {
  for (const r of opRegistrations(code.commentless)) {
    const node = { name: r.op, file: code.file, start: r.start, end: r.end, mentions: mentionsOf(code.code.slice(r.start, r.end)), operator: true };
    const list = functions.get(r.op);
    if (list) list.push(node);
    else functions.set(r.op, [node]);
  }
  const calls = dispatcherCalls(code.commentless);
  if (!calls.length) return;
  for (const list of functions.values()) {
    for (const fn of list) {
      if (fn.file !== code.file) continue;
      for (const call of calls) if (call.offset > fn.start && call.offset < fn.end) fn.mentions.add(call.op);
    }
  }
}

/**
 * The sources' own add-like atomics, by name, with the argument holding the address: a function
 * or macro whose body makes an add-like atomic on one of its parameters (else its first pointer
 * one). `ownType`: what the body's own declarations say it adds (`atomAdd(float* a, float v)`),
 * for a call site whose argument is of no type bitexact can read.
 */
function atomicWrappers(codes: readonly CodeText[], functions: ReadonlyMap<string, CFunction[]>): { wrappers: Map<string, number>; ownType: Map<string, CType> } {
  const wrappers = new Map<string, number>();
  const ownType = new Map<string, CType>();
  const allCode = codes.map((c) => c.code).join('\n');
  const note = (name: string, params: string[], body: string, declarations: string) => {
    const atomics = findAtomics(body).filter((a) => a.adds);
    if (!atomics.length) return;
    const names = params.map((p) => /([A-Za-z_]\w*)\s*(?:\[[^\]]*\])?\s*$/.exec(p.replace(/=.*$/, ''))?.[1] ?? '');
    const address = names.findIndex((n) => n && new RegExp(`\\b${n}\\b`).test(atomics[0]!.args[0] ?? ''));
    if (!wrappers.has(name)) wrappers.set(name, address !== -1 ? address : Math.max(0, params.findIndex((p) => p.includes('*'))));
    const typeOf = declaredTypeIn(declarations, allCode, true);
    const types = new Set(atomics.map((a) => accumulatedType(a, typeOf)));
    const type: CType = types.size === 1 ? [...types][0]! : 'unknown';
    const previous = ownType.get(name);
    ownType.set(name, previous === undefined || previous === type ? type : 'unknown');
  };
  for (const [name, list] of functions) {
    if (BUILTIN_ATOMIC.test(name) || name.includes('::')) continue;
    for (const fn of list) {
      const code = codes.find((c) => c.file === fn.file)!.code;
      if (/__global__[^;{}]*$/.test(code.slice(Math.max(0, fn.start - 200), fn.start))) continue;
      const open = code.indexOf('(', fn.start);
      const close = matching(code, open, '(', ')');
      note(name, splitTop(code.slice(open + 1, close)), code.slice(close, fn.end), code.slice(fn.start, fn.end));
    }
  }
  for (const { file } of codes) {
    for (const macro of macrosOf(file.text)) if (!BUILTIN_ATOMIC.test(macro.name) && !functions.has(macro.name)) note(macro.name, macro.params, macro.body, macro.body);
  }
  return { wrappers, ownType };
}

function splitTop(text: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of text) {
    if (c === '(' || c === '<' || c === '[') depth++;
    else if (c === ')' || c === '>' || c === ']') depth--;
    if (c === ',' && depth === 0) {
      out.push(current);
      current = '';
    } else current += c;
  }
  out.push(current);
  return out;
}

/** The functions named from `roots`, and those their bodies name, breadth first; `forwardOnly` stops at autograd backwards. */
function reach(roots: Set<string>, functions: ReadonlyMap<string, CFunction[]>, forwardOnly: boolean): CFunction[] {
  const seen = new Set<string>();
  const out: CFunction[] = [];
  const queue = [...roots];
  while (queue.length && out.length < MAX_REACHED) {
    const name = queue.shift()!;
    if (seen.has(name)) continue;
    seen.add(name);
    for (const fn of functions.get(name) ?? []) {
      if (forwardOnly && fn.backward) continue;
      out.push(fn);
      for (const m of fn.mentions) if (!seen.has(m) && functions.has(m)) queue.push(m);
    }
  }
  return out;
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
