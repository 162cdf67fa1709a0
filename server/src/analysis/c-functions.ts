// The functions a set of C++ / CUDA sources define, at the regex level (compiled-extensions.ts
// follows calls through them): each definition's name, body span and the names its body mentions.
// Members of a class deriving from `torch::autograd::Function<...>` are kept under `Class::name`
// (the class itself reaches them), so a `forward` elsewhere never pulls in an autograd backward and
// the caller can tell a kernel reached only from a backward. Not a C++ parser: an over-approximation
// kept inside the sources it is given.

export interface SourceText {
  path: string;
  text: string;
}

export interface CFunction {
  name: string;
  file: SourceText;
  /** The name through the end of the body, in the file's code text (comments and strings blanked). */
  start: number;
  end: number;
  mentions: Set<string>;
  /** The `backward` member of an autograd Function: runs only when a gradient flows back. */
  backward?: boolean;
  /** A registered operator (`ns::op`, op-registrations.ts): its span is the kernel argument. */
  operator?: boolean;
}

const C_CONTROL = new Set(['if', 'constexpr', 'for', 'while', 'switch', 'catch', 'return', 'sizeof', 'decltype', 'alignof', 'static_assert', 'defined', '__launch_bounds__', '__attribute__', 'alignas']);
// A name, template arguments (one level of nesting: `run_bwd_<cutlass::half_t, 128>`), parameters.
const DEFINITION = /\b([A-Za-z_]\w*)\s*(?:<[^;{}()<>]*(?:<[^;{}()<>]*>[^;{}()<>]*)*>\s*)?\(/g;
/** `DEFINE_BWD_KERNEL(kernel_name, ...) { ... }`: a macro that writes a kernel's signature, named by its first argument. */
const MACRO_NAME = /^[A-Z][A-Z0-9_]*$/;
/** Blocks that register a library's entry points (op-registrations.ts, compiled-reach.ts read them): no function, and none named by their first argument. */
const REGISTRATION_BLOCK = /^((STABLE_)?TORCH_LIBRARY(_FRAGMENT|_IMPL)?|PYBIND11_MODULE)$/;
const AFTER_PARAMETERS = /^\s*(?:(?:const|noexcept|override|final|mutable|volatile|&|&&)\s*)*(?:->\s*[\w:<>,\s*&]+?\s*)?\{/;
/** `class SpmmMax : public torch::autograd::Function<SpmmMax> {`: its name and what it derives from. */
const CLASS = /\b(?:class|struct)\s+([A-Za-z_]\w*)\s*(?:final\s*)?:\s*([^;{]*)\{/g;
const AUTOGRAD_BASE = /\bFunction\s*</;

/** A source's code text: comments and preprocessor lines blanked (`commentless`), then strings too (`code`). */
export interface CodeText {
  file: SourceText;
  commentless: string;
  code: string;
}

export function codeText(file: SourceText): CodeText {
  const commentless = blankComments(file.text);
  return { file, commentless, code: blankStrings(commentless) };
}

/** Every function the sources define, by name (a name defined twice keeps both). */
export function functionsOf(codes: readonly CodeText[]): Map<string, CFunction[]> {
  const functions = new Map<string, CFunction[]>();
  const add = (fn: CFunction) => {
    const list = functions.get(fn.name);
    if (list) list.push(fn);
    else functions.set(fn.name, [fn]);
  };
  for (const { file, code } of codes) {
    const classes = autogradClasses(file, code);
    for (const fn of definitionsIn(file, code)) {
      const owner = ownerOf(fn, code, classes);
      if (!owner) {
        add(fn);
        continue;
      }
      const member = { ...fn, name: `${owner.name}::${fn.name}`, ...(fn.name === 'backward' ? { backward: true } : {}) };
      owner.mentions.add(member.name);
      add(member);
    }
    for (const c of classes) add(c);
  }
  return functions;
}

/** The autograd Function classes a file defines, as functions whose mentions are their members. */
function autogradClasses(file: SourceText, code: string): CFunction[] {
  const out: CFunction[] = [];
  for (const match of code.matchAll(CLASS)) {
    if (!AUTOGRAD_BASE.test(match[2]!)) continue;
    const open = match.index! + match[0].length - 1;
    const end = matching(code, open, '{', '}');
    if (end !== -1) out.push({ name: match[1]!, file, start: match.index!, end: end + 1, mentions: new Set() });
  }
  return out;
}

/** The autograd class a definition belongs to: inside its body, or written `Class::name(...)` outside it. */
function ownerOf(fn: CFunction, code: string, classes: readonly CFunction[]): CFunction | undefined {
  const qualifier = /([A-Za-z_]\w*)\s*::\s*$/.exec(code.slice(Math.max(0, fn.start - 100), fn.start))?.[1];
  return classes.find((c) => (qualifier ? c.name === qualifier : fn.start > c.start && fn.end <= c.end));
}

function definitionsIn(file: SourceText, code: string): CFunction[] {
  const out: CFunction[] = [];
  for (const match of code.matchAll(DEFINITION)) {
    const name = match[1]!;
    if (C_CONTROL.has(name) || REGISTRATION_BLOCK.test(name)) continue;
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

export function mentionsOf(text: string): Set<string> {
  return new Set(text.match(/\b[A-Za-z_]\w*\b/g) ?? []);
}

export function matching(code: string, open: number, o: string, c: string): number {
  let depth = 0;
  for (let i = open; i < code.length; i++) {
    const ch = code[i];
    if (ch === o) depth++;
    else if (ch === c && --depth === 0) return i;
  }
  return -1;
}

export function lineOf(code: string, offset: number): number {
  let line = 1;
  for (let i = code.indexOf('\n'); i !== -1 && i < offset; i = code.indexOf('\n', i + 1)) line++;
  return line;
}

/** A function-like macro: `#define ATOMIC_ADD(p, v) atomicAdd(p, v)`. */
export interface CMacro {
  name: string;
  params: string[];
  body: string;
}

export function macrosOf(text: string): CMacro[] {
  const commentless = text.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' '));
  return [...commentless.matchAll(/^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)\(([^)]*)\)((?:[^\n]*\\\n)*[^\n]*)/gm)].map((m) => ({
    name: m[1]!,
    params: m[2]!.split(',').map((p) => p.trim()),
    body: m[3]!.replace(/\\\n/g, ' \n'),
  }));
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
