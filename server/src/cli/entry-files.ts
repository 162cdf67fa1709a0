// `bitexact check --entry train.py`: the entry scripts and the workspace files they import, found
// on disk (analysis/import-graph.ts does the resolving). Absolute imports are looked up as Python
// would for `python train.py` (the script's folder first), then in the project root and its `src/`
// (a package installed in development mode); anything else (site-packages) is not followed.
import fs from 'node:fs';
import path from 'node:path';
import type { Checker } from '../analysis/index.js';
import { importsOf, ModuleFiles, ReachedFile, reachableFiles } from '../analysis/import-graph.js';

/** The files `entries` (absolute paths) reach, breadth first; `projectRoot` gives an entry's project folder. */
export function filesReachedFrom(checker: Checker, entries: readonly string[], projectRoot: (file: string) => string): ReachedFile[] {
  const files: ModuleFiles = {
    isFile: (file) => {
      try {
        return fs.statSync(file).isFile();
      } catch {
        return false;
      }
    },
    read: (file) => {
      try {
        return fs.readFileSync(file, 'utf8');
      } catch {
        return undefined;
      }
    },
  };
  const roots = (entry: string) => {
    const root = projectRoot(entry);
    return [...new Set([path.dirname(entry), root, path.join(root, 'src')])];
  };
  const parse = (text: string) => {
    let tree;
    try {
      tree = checker.parser.parse(text);
    } catch {
      return []; // a text the parser refuses (too large): the check notes it; its imports are not followed
    }
    try {
      return importsOf(tree.rootNode);
    } finally {
      tree.delete();
    }
  };
  return reachableFiles(entries, roots, files, parse);
}
