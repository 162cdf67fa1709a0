// Open documents with their parse trees. Incremental changes are applied to the text and told to the
// tree (tree.edit); the tree is re-parsed, reusing what did not change, when it is next needed.
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { TextDocumentContentChangeEvent } from 'vscode-languageserver';
import type { Tree } from 'web-tree-sitter';
import { ChunkCache } from '../analysis/chunk-cache.js';
import { PythonParser, TextChange, editTreeAt, pointAt } from '../analysis/parse.js';

export interface OpenDocument {
  document: TextDocument;
  /** Parsed lazily: files no rule can match are never parsed. */
  tree?: Tree;
  /** Per-function results of the last analysis; kept, like the tree, for recently edited documents. */
  chunks?: ChunkCache;
  /** The tree has been told of edits (tree.edit) but not re-parsed yet: treeOf() parses. */
  treeStale?: boolean;
  /** Edits since the last analysis (undefined: unknown, e.g. after a full-text change). */
  edits?: TextChange[];
}

/**
 * Text kept parsed, most recently analysed documents first: a tree costs ~45 bytes of wasm memory per
 * character of source (9 MB for 5,000 lines), and wasm memory never shrinks, so the peak is what
 * stays. ~400k characters is ~18 MB: a dozen ordinary files, or two of 5,000 lines. Other documents
 * are parsed again, from text, when next analysed.
 */
const TREE_BUDGET_CHARS = 400_000;
/** From this size on (~100 ms of parsing), a document without a tree is parsed in slices (parseLarge). */
const SLICED_PARSE_CHARS = 200_000;
/** Edits kept for the quick analysis of the next version; beyond this the next analysis is a full one. */
const MAX_PENDING_EDITS = 1000;

export class DocumentStore {
  private readonly open = new Map<string, OpenDocument>();
  /** Most recently edited first: their trees stay, the rest are freed (wasm memory is the cost). */
  private readonly recent: string[] = [];

  /**
   * `idle`: told of each document whose tree and chunks were freed (it is not being edited now).
   * `busy`: a document under analysis (analysis-runs.ts), whose tree is kept over the budget until it
   * ends: freed, its analysis would be dropped, and two large documents analysed at once would each
   * free the other's tree, for ever.
   */
  constructor(
    private readonly parser: PythonParser,
    private readonly idle: (uri: string) => void = () => {},
    private readonly busy: (uri: string) => boolean = () => false,
  ) {}

  get(uri: string): OpenDocument | undefined {
    return this.open.get(uri);
  }

  all(): OpenDocument[] {
    return [...this.open.values()];
  }

  opened(uri: string, languageId: string, version: number, text: string): OpenDocument {
    this.closed(uri);
    const entry = { document: TextDocument.create(uri, languageId, version, text) };
    this.open.set(uri, entry);
    return entry;
  }

  changed(uri: string, version: number, changes: TextDocumentContentChangeEvent[]): OpenDocument | undefined {
    const entry = this.open.get(uri);
    if (!entry) return undefined;
    for (const change of changes) {
      const before = entry.document;
      if ('range' in change) {
        const edit = { start: before.offsetAt(change.range.start), oldEnd: before.offsetAt(change.range.end), newText: change.text };
        entry.edits?.push(edit);
        // A document nobody asks diagnostics for must not collect edits without end.
        if (entry.edits && entry.edits.length > MAX_PENDING_EDITS) entry.edits = undefined;
        // Parsing waits until a tree is needed: an edit inside one function may not need one at all
        // (Checker.analyzeEdit), and several edits then cost one parse.
        if (entry.tree) {
          const text = before.getText();
          editTreeAt(entry.tree, edit, pointAt(text, edit.start), pointAt(text, edit.oldEnd));
          entry.treeStale = true;
        }
      } else {
        entry.tree?.delete();
        entry.tree = undefined;
        entry.edits = undefined;
      }
      entry.document = TextDocument.update(before, [change], version);
    }
    return entry;
  }

  /** The document's tree, parsing it now if it has none yet; frees the trees of documents idle longest. */
  treeOf(entry: OpenDocument): Tree {
    this.keepTreeOf(entry.document.uri);
    if (entry.tree && entry.treeStale) {
      const tree = this.parser.parse(entry.document.getText(), entry.tree);
      entry.tree.delete();
      entry.tree = tree;
    }
    entry.treeStale = false;
    entry.tree ??= this.parser.parse(entry.document.getText());
    entry.chunks ??= new ChunkCache();
    return entry.tree;
  }

  /**
   * Parses a large document that has no tree yet in slices (PythonParser.parseInSlices), `between()`
   * awaited after each: false when the document moved on, which drops the parse. True once the
   * document has its tree (treeOf() then returns it at once). Small documents, and trees that only
   * need a re-parse after edits (which reuses the old tree and is fast), are left to treeOf().
   */
  parseLarge(entry: OpenDocument, between: () => Promise<boolean>): Promise<boolean> {
    if (entry.tree || entry.document.getText().length < SLICED_PARSE_CHARS) return Promise.resolve(true);
    // A second asker of the same text joins the parse under way.
    const text = entry.document.getText();
    const pending = this.parsing.get(entry);
    if (pending && pending.text === text) return pending.done;
    const done = this.sliceParse(entry, text, between).finally(() => {
      if (this.parsing.get(entry)?.done === done) this.parsing.delete(entry);
    });
    this.parsing.set(entry, { text, done });
    return done;
  }

  private readonly parsing = new WeakMap<OpenDocument, { text: string; done: Promise<boolean> }>();
  /** Work counted, for bitexact/stats: pauses between parse slices, and sliced parses dropped. */
  readonly parseCounts = { parsePauses: 0, parsesStopped: 0 };

  private async sliceParse(entry: OpenDocument, text: string, between: () => Promise<boolean>): Promise<boolean> {
    const counted = async () => {
      this.parseCounts.parsePauses++;
      return between();
    };
    const tree = await this.parser.parseInSlices(text, counted);
    if (!tree) {
      this.parseCounts.parsesStopped++;
      return false;
    }
    // Closed, replaced or given another tree meanwhile: this one is not the document's.
    if (this.open.get(entry.document.uri) !== entry || entry.tree || entry.document.getText() !== text) {
      tree.delete();
      return entry.tree !== undefined;
    }
    this.keepTreeOf(entry.document.uri);
    entry.tree = tree;
    entry.treeStale = false;
    return true;
  }

  /** Moves `uri` to the front and frees the trees beyond the budget, before a new tree is parsed. */
  private keepTreeOf(uri: string): void {
    const at = this.recent.indexOf(uri);
    if (at >= 0) this.recent.splice(at, 1);
    this.recent.unshift(uri);
    let chars = 0;
    for (let i = 0; i < this.recent.length; i++) {
      chars += this.open.get(this.recent[i]!)?.document.getText().length ?? 0;
      if (i === 0 || chars <= TREE_BUDGET_CHARS) continue;
      for (const stale of this.recent.splice(i)) {
        if (this.busy(stale)) {
          this.recent.push(stale);
          continue;
        }
        const other = this.open.get(stale);
        other?.tree?.delete();
        if (other) {
          other.tree = undefined;
          other.chunks = undefined;
          other.treeStale = false;
          this.idle(stale);
        }
      }
      break;
    }
  }

  closed(uri: string): void {
    this.open.get(uri)?.tree?.delete();
    this.open.delete(uri);
    const at = this.recent.indexOf(uri);
    if (at >= 0) this.recent.splice(at, 1);
  }
}
