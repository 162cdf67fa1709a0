// One parser per process. The grammar is the tree-sitter-python wasm shipped inside the pinned
// npm package `tree-sitter-python` (see README "Where the grammar comes from"); the caller hands
// in the file locations so the core itself does no path guessing.
import { Edit, Language, Node, Parser, Point, Query, Tree } from 'web-tree-sitter';
import { MAX_PARSE_BYTES } from './config.js';

export interface GrammarFiles {
  /** Directory that holds web-tree-sitter.wasm (the runtime). */
  runtimeDir: string;
  /** Path to tree-sitter-python.wasm, or its bytes. */
  python: string | Uint8Array;
}

export interface TextChange {
  /** UTF-16 offsets into the old text. */
  start: number;
  oldEnd: number;
  newText: string;
}

export class PythonParser {
  private constructor(
    private readonly parser: Parser,
    private readonly language: Language,
  ) {}

  static async create(files: GrammarFiles): Promise<PythonParser> {
    await Parser.init({ locateFile: (name: string) => `${files.runtimeDir}/${name}` });
    const language = await Language.load(files.python);
    const parser = new Parser();
    parser.setLanguage(language);
    return new PythonParser(parser, language);
  }

  /**
   * parse() in slices of about `sliceMs` of parsing each, awaiting `between()` after every slice but
   * the last: the language server reads its messages there, so a large file's first parse does not
   * hold it (1 MB of Python takes 0.4–0.6 s). `between()` resolving false stops the parse (undefined).
   * Tree-sitter resumes a halted parse on the next call of the same parser, so sliced parses run on a
   * parser of their own, one after another.
   */
  parseInSlices(text: string, between: () => Promise<boolean>, sliceMs = 20): Promise<Tree | undefined> {
    const sliced = (this.sliced ??= { parser: this.newParser(), queue: Promise.resolve() });
    const run = sliced.queue.then(async () => {
      const tree = await this.sliceParse(sliced.parser, text, between, sliceMs);
      // The same recovery as parse(): starred operands masked, on the lines of the syntax error only.
      if (!tree || !tree.rootNode.hasError || !text.includes('*')) return tree;
      const masked = maskStarredOperands(text, tree);
      if (masked === text) return tree;
      const retry = await this.sliceParse(sliced.parser, masked, between, sliceMs);
      if (retry && errorCount(retry) < errorCount(tree)) {
        tree.delete();
        return retry;
      }
      retry?.delete();
      return tree;
    });
    sliced.queue = run.catch(() => undefined);
    return run;
  }

  private sliced?: { parser: Parser; queue: Promise<unknown> };

  private newParser(): Parser {
    const parser = new Parser();
    parser.setLanguage(this.language);
    return parser;
  }

  private async sliceParse(parser: Parser, text: string, between: () => Promise<boolean>, sliceMs: number): Promise<Tree | undefined> {
    refuseHuge(text);
    for (;;) {
      const deadline = performance.now() + sliceMs;
      // Returning true halts the parse; the next call with the same text resumes it.
      const tree = parser.parse(text, null, { progressCallback: () => performance.now() > deadline });
      if (tree) return tree;
      if (!(await between())) {
        parser.reset();
        return undefined;
      }
    }
  }

  /** A compiled tree-sitter query over the Python grammar; the caller keeps it for reuse. */
  query(source: string): Query {
    return new Query(this.language, source);
  }

  /**
   * Re-parses after one edit, reusing the unchanged parts of `oldTree`. `oldTree` is edited in place
   * and must not be used afterwards.
   */
  reparse(oldTree: Tree, oldText: string, change: TextChange): { tree: Tree; text: string } {
    const text = editTree(oldTree, oldText, change);
    return { tree: this.parse(text, oldTree), text };
  }

  /**
   * Parses `text`, reusing `oldTree` (already told of the edits with editTree) where it can. Valid
   * Python that tree-sitter-python 0.25 (the newest release) rejects is recovered: a starred operand
   * that is not a primary (`return dx, *[None] * 10`, `*((None,) * 30)`) is parsed with the star
   * masked by a space, on the lines of the syntax error only, which keeps every position.
   */
  parse(text: string, oldTree?: Tree): Tree {
    const tree = this.parseRaw(text, oldTree);
    if (!tree.rootNode.hasError || !text.includes('*')) return tree;
    const masked = maskStarredOperands(text, tree);
    if (masked === text) return tree;
    const retry = this.parseRaw(masked);
    if (errorCount(retry) < errorCount(tree)) {
      tree.delete();
      return retry;
    }
    retry.delete();
    return tree;
  }

  private parseRaw(text: string, oldTree?: Tree): Tree {
    refuseHuge(text);
    const tree = this.parser.parse(text, oldTree);
    if (!tree) throw new Error('tree-sitter returned no tree');
    return tree;
  }

  /** Parses one slice of `text` as if it were the whole file; nodes keep their positions in `text`. */
  parseSlice(text: string, slice: { startIndex: number; endIndex: number; startPosition: Point; endPosition: Point }): Tree {
    refuseHuge(text);
    const tree = this.parser.parse(text, null, { includedRanges: [slice] });
    if (!tree) throw new Error('tree-sitter returned no tree');
    return tree;
  }
}

/** Thrown instead of parsing a text larger than MAX_PARSE_BYTES. */
export class TooLargeToParse extends Error {}

/**
 * The last line of defence behind max-file-size: tree-sitter's wasm runs out of memory on a text of
 * ≳ 40 MB and aborts, and an aborted module cannot parse again in this process. No text that large
 * reaches it (UTF-16 code units, each at least one byte of the file).
 */
function refuseHuge(text: string): void {
  if (text.length > MAX_PARSE_BYTES) throw new TooLargeToParse(`${(text.length / 1e6).toFixed(1)} million characters: larger than the parser takes (${MAX_PARSE_BYTES / (1024 * 1024)} MiB)`);
}

/**
 * Tells `tree` of one edit (tree.edit) without re-parsing: the language server applies every keystroke
 * this way and parses once when it needs the tree. Returns the new text.
 */
export function editTree(tree: Tree, oldText: string, change: TextChange): string {
  editTreeAt(tree, change, pointAt(oldText, change.start), pointAt(oldText, change.oldEnd));
  return applyChange(oldText, change);
}

/** editTree() without building the new text (the caller has it). */
export function editTreeAt(tree: Tree, change: TextChange, startPosition: Point, oldEndPosition: Point): void {
  tree.edit(
    new Edit({
      startIndex: change.start,
      oldEndIndex: change.oldEnd,
      newEndIndex: change.start + change.newText.length,
      startPosition,
      oldEndPosition,
      newEndPosition: pointAfter(startPosition, change.newText),
    }),
  );
}

/** Where `inserted` ends when written at `start`. */
function pointAfter(start: Point, inserted: string): Point {
  const lastBreak = inserted.lastIndexOf('\n');
  if (lastBreak < 0) return { row: start.row, column: start.column + inserted.length };
  return { row: start.row + inserted.split('\n').length - 1, column: inserted.length - lastBreak - 1 };
}

export function applyChange(text: string, change: TextChange): string {
  return text.slice(0, change.start) + change.newText + text.slice(change.oldEnd);
}

/** Row/column (UTF-16) of an offset; used only for edits, so a linear scan is fine. */
export function pointAt(text: string, offset: number): Point {
  let row = 0;
  let lineStart = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    row++;
    lineStart = i + 1;
  }
  return { row, column: offset - lineStart };
}

/** A star that unpacks (after `,`, `(`, `[`, `{`, `=` or `return`/`yield`), not a product or `**`. */
const UNPACKING_STAR = /((?:^|[,(\[{=])\s*|\b(?:return|yield)\s+)\*(?=[\w(\[{])/g;

/** `text` with the unpacking stars on the rows of syntax errors replaced by spaces. */
function maskStarredOperands(text: string, tree: Tree): string {
  const rows = new Set<number>();
  for (const error of errorNodes(tree.rootNode, 50)) {
    for (let row = error.startPosition.row; row <= error.endPosition.row && row - error.startPosition.row < 20; row++) rows.add(row);
  }
  if (rows.size === 0) return text;
  const lines = text.split('\n');
  for (const row of rows) {
    const line = lines[row];
    if (line !== undefined && line.includes('*')) lines[row] = line.replace(UNPACKING_STAR, (_, before: string) => `${before} `);
  }
  return lines.join('\n');
}

function errorCount(tree: Tree): number {
  return tree.rootNode.hasError ? errorNodes(tree.rootNode, Infinity).length + 1 : 0;
}

/**
 * The first `limit` ERROR nodes under `root`, in document order (as descendantsOfType gives them),
 * visiting only nodes that contain an error: descendantsOfType walks the whole tree, 200k nodes of a
 * 5,000-line file, on every keystroke that leaves a syntax error.
 */
function errorNodes(root: Node, limit: number): Node[] {
  const found: Node[] = [];
  const visit = (node: Node) => {
    for (const child of node.children) {
      if (found.length >= limit) return;
      if (!child?.hasError) continue;
      if (child.type === 'ERROR') found.push(child);
      visit(child);
    }
  };
  if (root.type === 'ERROR') found.push(root);
  visit(root);
  return found.slice(0, limit);
}
