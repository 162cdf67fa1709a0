// A regex-level reader for CUDA C++ held in Python strings (load_inline, CuPy, PyCUDA): finds the
// atomic calls, the declared type of the memory they update, whether their returned old value is
// read, and maps an offset in the string back to a position in the Python file. It is not a C
// parser: anything it cannot read is "unknown", never a guess.
import type { Node } from 'web-tree-sitter';
import type { CallSite } from '../../calls.js';
import { argument, literalValue } from '../../syntax.js';
import type { Range } from '../../types.js';
import type { RuleContext } from '../rule.js';
import { moduleValue } from './module-scope.js';

export type CType = 'float' | 'int' | 'unknown';

/** Where each supported API takes its device code and its parameter declarations. */
interface SourceSpec {
  code: Array<[number, string]>;
  /** Further strings read only for declarations and dispatch macros (cpp_sources). */
  context?: Array<[number, string]>;
  /** CuPy in_params / out_params strings ("float32 x, raw float32 y"). */
  params?: Array<[number, string]>;
}

export const SOURCE_APIS: Record<string, SourceSpec> = {
  'torch.utils.cpp_extension.load_inline': { code: [[2, 'cuda_sources']], context: [[1, 'cpp_sources']] },
  'cupy.RawKernel': { code: [[0, 'code']] },
  'cupy.RawModule': { code: [[0, 'code']] },
  'cupy.ElementwiseKernel': { code: [[2, 'operation'], [-1, 'preamble']], params: [[0, 'in_params'], [1, 'out_params']] },
  'cupy.ReductionKernel': {
    code: [[2, 'map_expr'], [3, 'reduce_expr'], [4, 'post_map_expr'], [-1, 'preamble']],
    params: [[0, 'in_params'], [1, 'out_params']],
  },
  'pycuda.compiler.SourceModule': { code: [[0, 'source']] },
};

export interface CAtomic {
  name: string;
  /** Offsets in the string node's source text. */
  start: number;
  end: number;
  args: string[];
  /** The returned old value is read (assigned, compared, passed on). */
  used: boolean;
  /** An add-like atomic (atomicAdd, gpuAtomicAdd...) or a compare-and-swap loop emulating one. */
  adds: boolean;
  /** A compare-and-swap that emulates a float operation through bit casts. */
  emulated: boolean;
  /** Text of the C line holding the call (for `// bitexact: ignore[...]`). */
  line: string;
  /** The argument holding the address, for a project's own wrapper (`atomAdd(grad + i, v)`); else the first. */
  address?: number;
}

export interface ScannedSource {
  node: Node;
  atomics: CAtomic[];
}

export interface CallSources {
  sources: ScannedSource[];
  /** Element type of a name, from declarations in any of the call's strings or CuPy params. */
  typeOf(name: string): CType;
  /** The call's strings mention alertNotDeterministic (torch's mode would then raise). */
  alerts: boolean;
}

/** Prefilter words: a file with none of them has no atomic in any string. */
export const ATOMIC_TRIGGERS = ['Add', 'Sub', 'Exch', 'Min', 'Max', 'Inc', 'Dec', 'CAS', 'And', 'Or', 'Xor']
  .flatMap((op) => [`atomic${op}`, `atomic${op}_block`, `atomic${op}_system`])
  .concat(['gpuAtomicAdd', 'gpuAtomicAddNoReturn', 'fastAtomicAdd', 'unsafeAtomicAdd']);

const ADD_ATOMICS = new Set(['atomicAdd', 'atomicAdd_block', 'atomicAdd_system', 'gpuAtomicAdd', 'gpuAtomicAddNoReturn', 'fastAtomicAdd', 'unsafeAtomicAdd', 'atomicSub']);
const ATOMIC_RE = /\b(atomic(?:Add|Sub|Exch|Min|Max|Inc|Dec|CAS|And|Or|Xor)(?:_block|_system)?|gpuAtomicAdd(?:NoReturn)?|fastAtomicAdd|unsafeAtomicAdd)\s*\(/g;
/** A sum, difference or product in a compare-and-swap's new value: a float op whose rounding depends on the order. */
const FLOAT_ARITHMETIC = /[+-]|[\w)\]]\s*\*\s*[\w(]/;
const BIT_CASTS = /__(double_as_longlong|float_as_u?int|half_as_u?short|bfloat16_as_u?short|longlong_as_double|u?int_as_float)\b/;
const C_KEYWORDS = new Set(['return', 'else', 'case', 'goto', 'sizeof', 'new', 'delete', 'throw', 'do', 'if', 'while', 'for', 'switch', 'co_return']);
const QUALIFIERS = /(?:\s|\*|&|\bconst\b|\b__restrict__\b|\b__restrict\b|\brestrict\b|\bvolatile\b)+$/;
const FLOAT_TYPES = /^(float|double|half|__half2?|__nv_bfloat162?|nv_bfloat16|bfloat16|float[234]|double[234]|(at|c10)::(Half|BFloat16|Float8\w*)|__nv_fp8\w*|float(16|32|64)|complex(64|128)|f(16|32|64))$/;
const INT_TYPES = /^((un)?signed( (char|short|int|long|long long|long int|long long int))?|int|long|short|char|bool|long long|long int|long long int|size_t|ptrdiff_t|u?int(8|16|32|64)(_t)?|index_t|uint|ulong|ull|b1|i[1-8]|u[1-8])$/;
const SCALAR_TEMPLATES = /^(scalar_t|accscalar_t|acc_t|opmath_t|scalar_type|T|U)$/;

export function collectSources(call: CallSite, ctx: RuleContext): CallSources | undefined {
  const spec = SOURCE_APIS[call.callee];
  if (!spec) return undefined;
  const codeNodes = spec.code.flatMap(([i, name]) => stringNodes(argument(call.args, i, name), ctx));
  if (codeNodes.length === 0) return undefined;
  const contextNodes = (spec.context ?? []).flatMap(([i, name]) => stringNodes(argument(call.args, i, name), ctx));
  const all = [...codeNodes, ...contextNodes].map((n) => blankComments(n.text)).join('\n');
  const params = new Map<string, string>();
  for (const [i, name] of spec.params ?? []) {
    const text = literalValue(argument(call.args, i, name));
    if (typeof text === 'string') parseParams(text, params);
  }
  const dispatch = dispatchKind(all);
  const cache = new Map<string, CType>();
  const typeOf = (name: string): CType => {
    let t = cache.get(name);
    if (t === undefined) {
      const declared = declaredType(all, name) ?? params.get(name);
      t = declared === undefined ? 'unknown' : classify(declared, dispatch);
      cache.set(name, t);
    }
    return t;
  };
  const sources = dedupe(codeNodes).map((node) => ({ node, atomics: findAtomics(node.text) }));
  return { sources, typeOf, alerts: /alertNotDeterministic/.test(all) };
}

/** The element type an add-like atomic accumulates: from the address, else from the value. */
export function accumulatedType(atomic: CAtomic, typeOf: (name: string) => CType): CType {
  if (atomic.emulated) return 'float';
  const at = atomic.address ?? 0;
  const address = atomic.args[at];
  const value = atomic.name === 'fastAtomicAdd' ? atomic.args[3] : atomic.args[at + 1];
  const fromAddress = address === undefined ? 'unknown' : addressType(address, typeOf);
  if (fromAddress !== 'unknown') return fromAddress;
  return value === undefined ? 'unknown' : expressionType(value, typeOf);
}

/** Position of an offset inside a node's source text. */
export function positionIn(node: Node, offset: number): Range['start'] {
  const before = node.text.slice(0, offset);
  const newline = before.lastIndexOf('\n');
  if (newline === -1) return { line: node.startPosition.row, column: node.startPosition.column + offset };
  let lines = 0;
  for (let i = before.indexOf('\n'); i !== -1; i = before.indexOf('\n', i + 1)) lines++;
  return { line: node.startPosition.row + lines, column: offset - newline - 1 };
}

function atomicRange(node: Node, atomic: CAtomic): Range {
  return { start: positionIn(node, atomic.start), end: positionIn(node, atomic.end) };
}

/** `// bitexact: ignore[BX404]` (or a bare `ignore`) on the C line of the atomic. */
function suppressedInSource(atomic: CAtomic, id: string): boolean {
  const match = /bitexact:\s*ignore\b(?:\[([^\]]*)\])?/.exec(atomic.line);
  if (!match) return false;
  const ids = (match[1] ?? '').split(',').map((s) => s.trim()).filter(Boolean);
  return ids.length === 0 || ids.includes(id);
}

/**
 * The atomics in the sources `call` compiles that rule `id` should report: those `wanted` selects, not
 * suppressed in the source, and not reported already for another call sharing the string.
 */
export function* atomicsToReport(call: CallSite, ctx: RuleContext, id: string, wanted: (atomic: CAtomic, found: CallSources) => boolean): Generator<{ atomic: CAtomic; range: Range; found: CallSources }> {
  const found = collectSources(call, ctx);
  if (!found) return;
  for (const { node, atomics } of found.sources) {
    for (const atomic of atomics) {
      if (!wanted(atomic, found) || suppressedInSource(atomic, id)) continue;
      const range = atomicRange(node, atomic);
      if (firstReport(ctx, `${id}:${range.start.line}:${range.start.column}`)) yield { atomic, range, found };
    }
  }
}

/** Findings already reported per analysis, so a source string shared by two calls is reported once. */
const reported = new WeakMap<RuleContext, Set<string>>();
function firstReport(ctx: RuleContext, key: string): boolean {
  let seen = reported.get(ctx);
  if (!seen) reported.set(ctx, (seen = new Set()));
  if (seen.has(key)) return false;
  seen.add(key);
  return true;
}

// --- Python side: which string nodes hold the source --------------------------------------------

function stringNodes(raw: Node | undefined | null, ctx: RuleContext, depth = 0): Node[] {
  if (!raw || depth > 4) return [];
  const next = (n: Node | null | undefined) => stringNodes(n, ctx, depth + 1);
  switch (raw.type) {
    case 'string':
      return [raw];
    case 'concatenated_string':
      return raw.namedChildren.filter((c) => c.type === 'string');
    case 'list':
    case 'tuple':
    case 'parenthesized_expression':
      return raw.namedChildren.flatMap((c) => next(c));
    case 'binary_operator':
      return [...next(raw.childForFieldName('left')), ...next(raw.childForFieldName('right'))];
    case 'identifier': {
      const def = ctx.values.definition(raw);
      if (def && !def.unpacked) return next(def.value);
      return next(moduleValue(raw));
    }
    case 'call': {
      const fn = raw.childForFieldName('function');
      const qualified = fn ? ctx.scope.resolveExpression(fn) : undefined;
      const first = raw.childForFieldName('arguments')?.namedChildren[0];
      if (qualified === 'textwrap.dedent' || qualified === 'inspect.cleandoc') return next(first);
      if (fn?.type === 'attribute' && qualified === undefined) {
        const method = fn.childForFieldName('attribute')?.text ?? '';
        if (method === 'join') return next(first);
        if (/^(strip|lstrip|rstrip|format|replace|format_map)$/.test(method)) return next(fn.childForFieldName('object'));
      }
      return [];
    }
    default:
      return [];
  }
}

function dedupe(nodes: Node[]): Node[] {
  const seen = new Set<number>();
  return nodes.filter((n) => (seen.has(n.id) ? false : (seen.add(n.id), true)));
}

// --- C side ----------------------------------------------------------------------------------------

/**
 * Escape sequences of a non-raw Python string turned into the whitespace they stand for, and
 * comments into spaces, keeping every offset (`\\n` becomes a space and a newline).
 */
function blankComments(code: string): string {
  return code
    .replace(/\\n/g, ' \n')
    .replace(/\\[tr]/g, '  ')
    .replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' '));
}

/**
 * The atomic calls in `raw`; `wrappers` adds a project's own add-like atomics (a device function
 * or macro around `atomicAdd`, a compare-and-swap loop), by name, with the index of the argument
 * that holds the address.
 */
export function findAtomics(raw: string, wrappers?: ReadonlyMap<string, number>): CAtomic[] {
  const code = blankComments(raw);
  const found: CAtomic[] = [];
  const patterns = [ATOMIC_RE];
  // A wrapper may be a template: `spread_rows<Wide>(params)`.
  if (wrappers?.size) patterns.push(new RegExp(`\\b(${[...wrappers.keys()].join('|')})\\s*(?:<[^;(){}<>]*(?:<[^;(){}<>]*>[^;(){}<>]*)*>\\s*)?\\(`, 'g'));
  for (const match of patterns.flatMap((re) => [...code.matchAll(re)]).sort((a, b) => a.index! - b.index!)) {
    const start = match.index!;
    const open = start + match[0].length - 1;
    const close = matchingParen(code, open);
    if (close === -1) continue;
    const before = code.slice(Math.max(0, start - 300), start);
    if (isDeclaration(before)) continue;
    const name = match[1]!;
    const args = splitArgs(code.slice(open + 1, close));
    const emulated = name.startsWith('atomicCAS') && BIT_CASTS.test(args[2] ?? '') && FLOAT_ARITHMETIC.test((args[2] ?? '').replace(/->/g, ''));
    const wrapped = wrappers?.get(name);
    const lineStart = raw.lastIndexOf('\n', start) + 1;
    const lineEnd = raw.indexOf('\n', start);
    found.push({
      name,
      start,
      end: close + 1,
      args,
      used: isUsed(before, code.slice(close + 1)),
      adds: ADD_ATOMICS.has(name) || emulated || wrapped !== undefined,
      emulated,
      line: raw.slice(lineStart, lineEnd === -1 ? raw.length : lineEnd),
      ...(wrapped !== undefined ? { address: wrapped } : {}),
    });
  }
  return found;
}

function matchingParen(code: string, open: number): number {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    const c = code[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') {
      depth--;
      if (depth === 0) return c === ')' ? i : -1;
    }
  }
  return -1;
}

function splitArgs(text: string): string[] {
  const args: string[] = [];
  let depth = 0;
  let current = '';
  for (const c of text) {
    if (c === '(' || c === '[' || c === '{' || c === '<') depth++;
    else if (c === ')' || c === ']' || c === '}' || c === '>') depth = Math.max(0, depth - 1);
    if (c === ',' && depth === 0) {
      args.push(current.trim());
      current = '';
    } else current += c;
  }
  if (current.trim()) args.push(current.trim());
  return args;
}

/** `__device__ float atomicAdd(float* a, float b)`: a type name or `*` right before the name. */
function isDeclaration(before: string): boolean {
  const trimmed = before.replace(/\s+$/, '');
  const word = /([A-Za-z_]\w*)$/.exec(trimmed)?.[1];
  return !!word && !C_KEYWORDS.has(word);
}

/** Is the atomic's value read, judging by the text around it? */
function isUsed(before: string, after: string): boolean {
  const trimmed = before.replace(/\s+$/, '');
  const last = trimmed.at(-1);
  // A quote is the start of the Python string: `'atomicAdd(&y[i], x)'` in a CuPy operation.
  let statement = last === undefined || ';{}"\''.includes(last) || /\b(else|do)$/.test(trimmed);
  if (last === ')') {
    // `if (ready) atomicAdd(...)` starts a statement; `(float)atomicAdd(...)` is a cast of its value.
    let depth = 0;
    let open = trimmed.length - 1;
    for (; open >= 0; open--) {
      if (trimmed[open] === ')') depth++;
      else if (trimmed[open] === '(' && --depth === 0) break;
    }
    const inner = trimmed.slice(open + 1, -1).trim();
    statement = inner === 'void' || /\b(if|while|for|switch)\s*$/.test(trimmed.slice(0, Math.max(0, open)));
  }
  if (last === ':') statement = !/\?[^;{}]*:$/.test(trimmed);
  if (!statement) return true;
  const next = after.trimStart()[0];
  return !(next === undefined || ';,)"\''.includes(next));
}

/** The type declared for `name` in the code: `float* out`, `__shared__ double acc[64]`, `float s = 0`. */
export function declaredType(code: string, name: string): string | undefined {
  const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const re = new RegExp(`(?<![\\w.])(?<!->)${escaped}\\s*(?=[\\[,;)=]|$)`, 'g');
  for (const match of code.matchAll(re)) {
    const before = code.slice(Math.max(0, match.index! - 200), match.index!).replace(QUALIFIERS, '');
    if (before.endsWith('>')) {
      const open = matchingAngle(before);
      if (open === -1) continue;
      const base = /([\w:]+)\s*$/.exec(before.slice(0, open))?.[1] ?? '';
      if (/Accessor|Tensor|DeviceTensor|Array|span$/.test(base)) return splitArgs(before.slice(open + 1, -1))[0]?.trim();
      continue;
    }
    const words = /((?:(?:unsigned|signed|long|short)\s+)*[A-Za-z_][\w]*(?:::[A-Za-z_]\w*)*)$/.exec(before)?.[1];
    if (!words || C_KEYWORDS.has(words)) continue;
    return words.replace(/\s+/g, ' ');
  }
  return undefined;
}

function matchingAngle(text: string): number {
  let depth = 0;
  for (let i = text.length - 1; i >= 0; i--) {
    if (text[i] === '>') depth++;
    else if (text[i] === '<' && --depth === 0) return i;
  }
  return -1;
}

type Dispatch = 'float' | 'int' | 'unknown';

/**
 * The element type of a name as C++ text declares it, with `scalar_t` as the AT_DISPATCH macros of
 * `dispatchCode` say (the compiled extensions of analysis/compiled-extensions.ts).
 */
export function declaredTypeIn(code: string, dispatchCode: string, mixedIsFloat = false): (name: string) => CType {
  const dispatch = dispatchKind(dispatchCode, mixedIsFloat);
  return (name) => {
    const declared = declaredType(code, name);
    return declared === undefined ? 'unknown' : classify(declared, dispatch);
  };
}

/**
 * What `scalar_t` stands for, from the AT_DISPATCH macro in the sources. `mixedIsFloat`: a dispatch
 * over float and integer types reads as float (a compiled library's op adds floats for the float
 * tensors it is given), where a single inline kernel's is unknown.
 */
function dispatchKind(code: string, mixedIsFloat = false): Dispatch {
  const floating = /AT_DISPATCH_(REDUCED_)?FLOATING_TYPES/.test(code);
  const integral = /AT_DISPATCH_INTEGRAL_TYPES/.test(code);
  const allTypes = /AT_DISPATCH_(ALL_TYPES|FLOATING_AND_COMPLEX|V2)/.test(code);
  const mixed = allTypes || /AT_DISPATCH_INDEX_TYPES/.test(code) || /AT_DISPATCH_FLOATING_TYPES_AND\w*\([^)]*(kInt|kLong|kBool|kByte|kChar|kShort)/.test(code);
  if (mixedIsFloat && (floating || allTypes)) return 'float';
  if (mixed || (floating && integral)) return 'unknown';
  return floating ? 'float' : integral ? 'int' : 'unknown';
}

function classify(type: string, dispatch: Dispatch): CType {
  const t = type.replace(/\b(const|volatile|__shared__|__device__|static|extern|register|raw)\b/g, '').replace(/\s+/g, ' ').trim();
  if (FLOAT_TYPES.test(t)) return 'float';
  if (INT_TYPES.test(t)) return 'int';
  if (SCALAR_TEMPLATES.test(t)) return dispatch;
  return 'unknown';
}

/** CuPy parameter lists: "float32 x, raw float32 y, T z" → name → type. */
function parseParams(text: string, into: Map<string, string>): void {
  for (const part of text.split(',')) {
    const words = part.trim().split(/\s+/).filter((w) => w !== 'raw' && w !== 'const');
    if (words.length >= 2) into.set(words[words.length - 1]!, words[words.length - 2]!);
  }
}

function stripParens(text: string): string {
  let t = text.trim();
  while (t.startsWith('(') && matchingParen(t, 0) === t.length - 1) t = t.slice(1, -1).trim();
  return t;
}

function addressType(raw: string, typeOf: (name: string) => CType): CType {
  const text = stripParens(raw);
  const cast = /^\(\s*([\w:\s]+?)\s*\*\s*\)/.exec(text) ?? /^(?:reinterpret_cast|static_cast|const_cast)\s*<\s*([\w:\s]+?)\s*\*\s*>/.exec(text);
  if (cast) return classify(cast[1]!, 'unknown');
  const base = /^&?\s*\(?\s*([A-Za-z_]\w*)\s*(\.|->)?/.exec(text);
  if (!base || base[2]) return 'unknown';
  return typeOf(base[1]!);
}

/** The type of a value expression: a literal, a cast, or the names it uses. */
function expressionType(raw: string, typeOf: (name: string) => CType): CType {
  const text = stripParens(raw);
  if (/^[-+]?\d+[uUlL]*$/.test(text)) return 'int';
  if (/(^|[^\w.])(\d+\.\d*|\.\d+|\d+[eE][-+]?\d+)[fF]?\b|\b\d+[fF]\b/.test(text)) return 'float';
  if (/\b(__float2half|__float2bfloat16|__half2float|__int2float_rn|static_cast<\s*(float|double)\s*>|\(\s*(float|double)\s*\))/.test(text)) return 'float';
  let sawInt = false;
  let sawUnknown = false;
  for (const match of text.matchAll(/(?<![\w.])(?<!->)([A-Za-z_]\w*)\b(?!\s*\()/g)) {
    const t = typeOf(match[1]!);
    if (t === 'float') return 'float';
    if (t === 'int') sawInt = true;
    else sawUnknown = true;
  }
  return sawInt && !sawUnknown ? 'int' : 'unknown';
}
