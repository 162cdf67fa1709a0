// Open documents with their parse trees. Incremental changes are applied to the text and to the
// tree (tree.edit + re-parse), so a keystroke in a 5,000-line file re-parses only what changed.
import { TextDocument } from 'vscode-languageserver-textdocument';
import type { TextDocumentContentChangeEvent } from 'vscode-languageserver';
import type { Tree } from 'web-tree-sitter';
import { ChunkCache } from '../analysis/chunk-cache.js';
import type { PythonParser } from '../analysis/parse.js';

export interface OpenDocument {
  document: TextDocument;
  /** Parsed lazily: files no rule can match are never parsed. */
  tree?: Tree;
  /** Per-function results of the last analysis; kept, like the tree, for recently edited documents. */
  chunks?: ChunkCache;
}

/** Trees kept for incremental re-parsing; other documents are re-parsed from text when they change. */
const KEPT_TREES = 8;

export class DocumentStore {
  private readonly open = new Map<string, OpenDocument>();
  /** Most recently edited first: their trees stay, the rest are freed (wasm memory is the cost). */
  private readonly recent: string[] = [];

  constructor(private readonly parser: PythonParser) {}

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
      const oldText = before.getText();
      if ('range' in change && entry.tree) {
        const start = before.offsetAt(change.range.start);
        const oldEnd = before.offsetAt(change.range.end);
        // reparse edits the old tree in place and returns a new one; the old one is freed here.
        const { tree } = this.parser.reparse(entry.tree, oldText, { start, oldEnd, newText: change.text });
        entry.tree.delete();
        entry.tree = tree;
      } else if (!('range' in change)) {
        entry.tree?.delete();
        entry.tree = undefined;
      }
      entry.document = TextDocument.update(before, [change], version);
    }
    return entry;
  }

  /** The document's tree, parsing it now if it has none yet; frees the trees of documents idle longest. */
  treeOf(entry: OpenDocument): Tree {
    entry.tree ??= this.parser.parse(entry.document.getText());
    entry.chunks ??= new ChunkCache();
    const uri = entry.document.uri;
    const at = this.recent.indexOf(uri);
    if (at >= 0) this.recent.splice(at, 1);
    this.recent.unshift(uri);
    for (const stale of this.recent.splice(KEPT_TREES)) {
      const other = this.open.get(stale);
      other?.tree?.delete();
      if (other) {
        other.tree = undefined;
        other.chunks = undefined;
      }
    }
    return entry.tree;
  }

  closed(uri: string): void {
    this.open.get(uri)?.tree?.delete();
    this.open.delete(uri);
    const at = this.recent.indexOf(uri);
    if (at >= 0) this.recent.splice(at, 1);
  }
}
