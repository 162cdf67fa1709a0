// Operators a C++ library registers with PyTorch's dispatcher, which Python calls as
// `torch.ops.<ns>.<op>(...)`: `TORCH_LIBRARY(ns, m)` / `TORCH_LIBRARY_FRAGMENT` with `m.def("op(...)
// -> ...")` or `m.def("op", &fn)`, `TORCH_LIBRARY_IMPL(ns, CUDA, m) { m.impl("op", TORCH_FN(fn)); }`,
// and the older `torch::RegisterOperators().op("ns::op", &fn)`. Each registration that can run on a
// CUDA tensor (a CUDA, autograd or composite kernel, or a catch-all one) names the code it runs: the
// text span of its kernel argument. A C++ call of a registered op through the dispatcher
// (`findSchemaOrThrow("ns::op", "")`) reaches it too. Regex-level, on comment-free text.
import { matching } from './c-functions.js';

export interface OpRegistration {
  /** `ns::op`. */
  op: string;
  /** The kernel argument's span (`&op_cuda`, `TORCH_FN(op_autograd)`, a lambda) in the text. */
  start: number;
  end: number;
}

/** Dispatch keys whose kernel runs for a CUDA tensor (or for any tensor): others (CPU, Meta...) never run a CUDA kernel. */
const CUDA_KEYS = /^(CUDA|AutogradCUDA|Autograd|AutogradOther|CompositeImplicitAutograd|CompositeExplicitAutograd\w*|SparseCUDA|QuantizedCUDA|NestedTensorCUDA|AutocastCUDA|CatchAll|DefaultBackend)$/;
const LIBRARY = /\b(?:STABLE_)?TORCH_LIBRARY(?:_FRAGMENT)?\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)\s*\{/g;
const LIBRARY_IMPL = /\b(?:STABLE_)?TORCH_LIBRARY_IMPL\s*\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*\)\s*\{/g;
const REGISTER = /\bRegisterOperators\s*\(\s*\)/g;
/** A dispatch key written in a registration's arguments: `c10::DispatchKey::CPU`, `torch::dispatch(torch::kCPU, ...)`. */
const KEY_IN_ARGS = /\bDispatchKey\s*::\s*(\w+)|\bdispatch\s*\(\s*(?:\w+\s*::\s*)*k(\w+)\b/;
const DISPATCHER_CALL = /\b(?:findSchemaOrThrow|findOp)\s*\(\s*\{?\s*"(\w+)::(\w+)(?:\.\w+)?"/g;

/** The registrations in one file's comment-free text whose kernels may run on CUDA. */
export function opRegistrations(text: string): OpRegistration[] {
  const out: OpRegistration[] = [];
  for (const block of text.matchAll(LIBRARY)) inBlock(text, block.index! + block[0].length - 1, block[1]!, block[2]!, undefined, out);
  for (const block of text.matchAll(LIBRARY_IMPL)) inBlock(text, block.index! + block[0].length - 1, block[1]!, block[3]!, block[2]!, out);
  for (const chain of text.matchAll(REGISTER)) {
    const end = text.indexOf(';', chain.index!);
    const stop = end === -1 ? text.length : end;
    for (const op of text.slice(chain.index!, stop).matchAll(/\.\s*op\s*\(/g)) {
      const open = chain.index! + op.index! + op[0].length - 1;
      const close = matching(text, open, '(', ')');
      if (close === -1 || close > stop) continue;
      const name = /"(\w+)::(\w+)/.exec(text.slice(open, close));
      if (name) add(out, `${name[1]}::${name[2]}`, text, open + 1, close, undefined);
    }
  }
  return out;
}

/** `ns::op` of each C++ call through the dispatcher, at its offset in the text. */
export function dispatcherCalls(text: string): Array<{ op: string; offset: number }> {
  return [...text.matchAll(DISPATCHER_CALL)].map((m) => ({ op: `${m[1]}::${m[2]}`, offset: m.index! }));
}

/** Namespaces a file registers operators in (a cheap test before reading a file whole). */
export function registeredNamespaces(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/\bTORCH_LIBRARY(?:_FRAGMENT|_IMPL)?\s*\(\s*(\w+)/g)) out.add(m[1]!);
  if (/\bRegisterOperators\b/.test(text)) for (const m of text.matchAll(/\.\s*op\s*\(\s*(?:[\w:]+\s*\(\s*)?"(\w+)::/g)) out.add(m[1]!);
  return out;
}

function inBlock(text: string, open: number, ns: string, module: string, key: string | undefined, out: OpRegistration[]): void {
  const close = matching(text, open, '{', '}');
  if (close === -1) return;
  const body = text.slice(open, close);
  const call = new RegExp(`\\b${module}\\s*\\.\\s*(def|impl)\\s*\\(`, 'g');
  for (const m of body.matchAll(call)) {
    const paren = open + m.index! + m[0].length - 1;
    const end = matching(text, paren, '(', ')');
    if (end === -1) continue;
    const args = text.slice(paren + 1, end);
    // The first argument is the schema or the name, in a string: `"op(Tensor x) -> Tensor"`,
    // `TORCH_SELECTIVE_NAME("ns::op")`; the kernel, where there is one, follows it.
    const name = /^[^,"]*"(?:(\w+)::)?(\w+)/.exec(args);
    const comma = firstTopLevelComma(args);
    if (!name || comma === -1) continue;
    add(out, `${name[1] ?? ns}::${name[2]}`, text, paren + 1 + comma + 1, end, key);
  }
}

function add(out: OpRegistration[], op: string, text: string, start: number, end: number, key: string | undefined): void {
  const written = KEY_IN_ARGS.exec(text.slice(start, end));
  const effective = written ? (written[1] ?? written[2]!) : key;
  if (effective === undefined || CUDA_KEYS.test(effective)) out.push({ op, start, end });
}

function firstTopLevelComma(text: string): number {
  let depth = 0;
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"' && text[i - 1] !== '\\') quoted = !quoted;
    if (quoted) continue;
    if (c === '(' || c === '{' || c === '[' || c === '<') depth++;
    else if (c === ')' || c === '}' || c === ']' || c === '>') depth--;
    else if (c === ',' && depth === 0) return i;
  }
  return -1;
}
