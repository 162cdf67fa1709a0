// Reading CUDA C++ text for atomics (the string sources of cuda-scan.ts, and the project sources of
// compiled-reach.ts): the atomic calls, the declared type of the memory they update, whether their
// returned old value is read. It is not a C parser: anything it cannot read is "unknown", never a guess.

export type CType = 'float' | 'int' | 'unknown';

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

// --- C side ----------------------------------------------------------------------------------------

/**
 * Escape sequences of a non-raw Python string turned into the whitespace they stand for, and
 * comments into spaces, keeping every offset (`\\n` becomes a space and a newline).
 */
export function blankComments(code: string): string {
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

export type Dispatch = 'float' | 'int' | 'unknown';

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
export function dispatchKind(code: string, mixedIsFloat = false): Dispatch {
  const floating = /AT_DISPATCH_(REDUCED_)?FLOATING_TYPES/.test(code);
  const integral = /AT_DISPATCH_INTEGRAL_TYPES/.test(code);
  const allTypes = /AT_DISPATCH_(ALL_TYPES|FLOATING_AND_COMPLEX|V2)/.test(code);
  const mixed = allTypes || /AT_DISPATCH_INDEX_TYPES/.test(code) || /AT_DISPATCH_FLOATING_TYPES_AND\w*\([^)]*(kInt|kLong|kBool|kByte|kChar|kShort)/.test(code);
  if (mixedIsFloat && (floating || allTypes)) return 'float';
  if (mixed || (floating && integral)) return 'unknown';
  return floating ? 'float' : integral ? 'int' : 'unknown';
}

export function classify(type: string, dispatch: Dispatch): CType {
  const t = type.replace(/\b(const|volatile|__shared__|__device__|static|extern|register|raw)\b/g, '').replace(/\s+/g, ' ').trim();
  if (FLOAT_TYPES.test(t)) return 'float';
  if (INT_TYPES.test(t)) return 'int';
  if (SCALAR_TEMPLATES.test(t)) return dispatch;
  return 'unknown';
}

/** CuPy parameter lists: "float32 x, raw float32 y, T z" → name → type. */
export function parseParams(text: string, into: Map<string, string>): void {
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
