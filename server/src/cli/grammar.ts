// The bundle ships web-tree-sitter.wasm and tree-sitter-python.wasm next to itself (scripts/build.mjs).
import path from 'node:path';
import type { GrammarFiles } from '../analysis/parse.js';

export function bundledGrammar(): GrammarFiles {
  return { runtimeDir: __dirname, python: path.join(__dirname, 'tree-sitter-python.wasm') };
}
