// CUDA C++ held in Python strings (load_inline, CuPy, PyCUDA): which string nodes of a call hold the
// source and its declarations, the atomics in them (read by c-atomics.ts), and where an offset in a
// string is in the Python file.
import type { Node } from 'web-tree-sitter';
import type { CallSite } from '../../calls.js';
import { argument, literalValue } from '../../syntax.js';
import type { Range } from '../../types.js';
import type { RuleContext } from '../rule.js';
import { blankComments, CAtomic, classify, CType, declaredType, dispatchKind, findAtomics, parseParams } from './c-atomics.js';
import { moduleValue } from './module-scope.js';


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
