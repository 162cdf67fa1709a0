// What a function's cached hits are keyed by (chunk-cache.ts): its text where it stands, and the
// signature of the file context its local hits can depend on; and how per-function results merge
// into a file's. The engine (engine.ts) and the edit path (chunk-edit.ts) share them.
import type { Node } from 'web-tree-sitter';
import type { ChunkResult } from './chunk-cache.js';
import { isEarlyExit } from './guards.js';
import type { Part } from './parts.js';

/** The cache key of a function: its text where it stands (class body, column). */
export function chunkKey(container: number, column: number, text: string): string {
  return `${container}:${column}:${text}`;
}

export function mergeResults(results: readonly ChunkResult[]): ChunkResult {
  return {
    candidates: results.flatMap((r) => r.candidates),
    modeSettings: results.flatMap((r) => r.modeSettings),
    suppressions: results.flatMap((r) => r.suppressions),
  };
}

function isInit(node: Node): boolean {
  const fn = node.type === 'decorated_definition' ? node.childForFieldName('definition') : node;
  return fn?.childForFieldName('name')?.text === '__init__';
}

/**
 * What a function's local hits can depend on besides its own text (see Rule.locality): the options,
 * the rules the text activates, import resolution (file-wide), and of the statements outside
 * functions only those that can guard a function — early exits before it in its block or an
 * enclosing one (guards.ts), so with the nesting of functions, classes and early exits — and, with
 * their rows, those above the first function, where cached fixes may insert (an import). Values are
 * looked up only in the function's own scope (values.ts), so other module-level code does not count,
 * except a class's header (bases: an autograd.Function) and its `__init__` (the `self.x` it sets).
 */
export function contextSignature(parts: readonly Part[], firstChunk: number, facts: string[]): string {
  const skeleton: string[] = [];
  for (const [i, p] of parts.entries()) {
    if (p.opens !== undefined) skeleton.push(`class ${p.opens} in ${p.container}`);
    if (p.header) skeleton.push(`\u0002${p.node.text}`);
    // A class's __init__ types the `self.x` its other methods read (values.ts selfAttributeValue).
    if (p.chunk && p.container > 0 && isInit(p.node)) skeleton.push(`\u0003${p.node.text}`);
    if (p.chunk) skeleton.push(`\u0000${p.container}`);
    else if (firstChunk < 0 || i < firstChunk) skeleton.push(`${p.node.startPosition.row}:${p.node.text}`);
    else if (isEarlyExit(p.node)) skeleton.push(`${p.container}:${p.node.text}`);
  }
  return [...facts, ...skeleton].join('\u0001');
}
