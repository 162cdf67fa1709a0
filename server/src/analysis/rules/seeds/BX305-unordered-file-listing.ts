import type { Node } from 'web-tree-sitter';
import { callRange } from '../../calls.js';
import { rangeOf } from '../../syntax.js';
import type { Fix, Range } from '../../types.js';
import { always, fitMessage, Rule, RuleContext } from '../rule.js';
import { callsByName, collectsOnlyIntoOrderFree, consumerOf, isPath, loopDependsOnOrder, orderedUses, outermost, ownDescendants, sortedLater, writesItsOwnFile } from './shared.js';

const MODULE_LISTINGS = new Set(['os.listdir', 'os.scandir', 'glob.glob', 'glob.iglob']);
const PATH_METHODS = new Set(['Tensor.glob', 'Tensor.rglob', 'Tensor.iterdir']);
const PATH_METHOD_NAMES = new Set(['glob', 'rglob', 'iterdir']);
/**
 * iopath's (and fvcore's) `PathManager`, the file-system layer of detectron2-style projects: its
 * `ls` returns the entries as the backend lists them (for local paths, `os.listdir`'s order).
 */
const PATH_MANAGER = /(^|\.)(PathManager|g_pathmgr|path_manager|pathmgr)$/;
/** Where does the listing's order end up mattering? undefined: nowhere (sorted, counted, cleanup). */
function orderMatters(call: Node, ctx: RuleContext): boolean {
  // with os.scandir(d) as it: the entries are read through `it`.
  const asPattern = call.parent?.type === 'as_pattern' ? call.parent : undefined;
  if (asPattern) {
    const alias = asPattern.childForFieldName('alias')?.namedChildren[0];
    if (!alias) return true;
    return !sortedLater(alias, asPattern, ctx) && orderedUses(alias, asPattern, ctx).length > 0;
  }
  const consumer = consumerOf(call, ctx);
  switch (consumer.kind) {
    case 'sorted':
    case 'order-free':
    case 'summed': // sum(1 for _ in os.scandir(d)): a count
      return false;
    case 'loop':
      return loopDependsOnOrder(consumer.loop, consumer.indexed);
    case 'assigned':
      if (sortedLater(consumer.target, consumer.statement, ctx)) return false;
      return orderedUses(consumer.target, consumer.statement, ctx).length > 0 || consumer.target.type === 'attribute';
    case 'ordered':
      return true;
  }
}

/**
 * `Path(...).glob(...)` and `PathManager.ls(...)`: the engine does not dispatch methods of values it
 * knows are not tensors, so they are found here, once per file.
 */
function scanPathMethods(root: Node, ctx: RuleContext): void {
  for (const call of callsByName(root, ctx, 'glob|rglob|iterdir|ls', 'method')) {
    const fn = call.childForFieldName('function');
    const method = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
    if (method === 'ls') {
      const receiver = fn!.childForFieldName('object')!;
      if (PATH_MANAGER.test(ctx.scope.resolveExpression(receiver) ?? receiver.text)) check(call, 'PathManager.ls', { start: rangeOf(receiver).start, end: rangeOf(call).end }, ctx);
      continue;
    }
    if (!method || !PATH_METHOD_NAMES.has(method) || ctx.scope.resolveExpression(fn!) !== undefined) continue;
    if (!isPath(fn!.childForFieldName('object'), ctx)) continue;
    check(call, `Path.${method}`, { start: rangeOf(fn!.childForFieldName('attribute')!).start, end: rangeOf(call).end }, ctx);
  }
}

/** File extensions of training data: images, audio, video, arrays, shards, token files. */
const DATA_EXTENSION = /\.(jpe?g|png|bmp|gif|webp|tiff?|wav|flac|mp3|ogg|mp4|avi|npy|npz|parquet|arrow|tfrecords?|jsonl|tar|idx|bin|h5|hdf5|lmdb|pcd|ply|zst)\b/i;
/** Calls that read a data file (the sample behind a listed path). */
const DATA_READERS = /(^|\.)(Image\.open|imread|imageio\.\w*read|load_image|np\.load|numpy\.load|torch\.load|torchaudio\.load|soundfile\.read|sf\.read|librosa\.load|read_parquet|read_csv|read_json|load_dataset|load_from_disk|h5py\.File|decode_image|read_image|read_file)$/;

/**
 * Is the call in a class that holds samples: a Dataset/DataPipe/Sampler (by its base, or a name
 * ending so), or one with `__getitem__`? A name that only contains the word (`DatasetsArgs`, a
 * configuration dataclass) is not one.
 */
function inDatasetClass(call: Node): boolean {
  for (let current = call.parent; current; current = current.parent) {
    if (current.type !== 'class_definition') continue;
    if (/(Dataset|DataPipe|Sampler)$/.test(current.childForFieldName('name')?.text ?? '')) return true;
    if (/Dataset|DataPipe|Sampler/.test(current.childForFieldName('superclasses')?.text ?? '')) return true;
    return /\bdef\s+__getitem__\s*\(/.test(current.text);
  }
  return false;
}

/** The glob pattern (or joined path) given to the listing names data files by their extension. */
function listsDataFiles(call: Node): boolean {
  return call.childForFieldName('arguments')?.namedChildren.some((a) => DATA_EXTENSION.test(a.text)) ?? false;
}

/** Does a loop body read data files, or write every item into one shared output (a merged corpus)? */
function loopHandlesData(loop: Node): boolean {
  const body = loop.childForFieldName('body');
  if (!body) return false;
  return ownDescendants(body, 'call').some((c) => {
    const fn = c.childForFieldName('function')?.text ?? '';
    if (DATA_READERS.test(fn)) return true;
    return /\.write$/.test(fn) && !writesItsOwnFile(c, body);
  });
}

/**
 * Does a loop collect paths it names as data files: an `append` / `extend` / `yield` in its body
 * (nested loops included: a listing of folders whose files the inner loop collects) and a string
 * literal there naming a data extension (`suffix = "_image.png"`, `name + "_labels.png"`)?
 */
function collectsNamedDataFiles(loop: Node): boolean {
  const body = loop.childForFieldName('body');
  if (!body) return false;
  const collects = ownDescendants(body, 'yield').length > 0 || ownDescendants(body, 'call').some((c) => {
    const fn = c.childForFieldName('function');
    return fn?.type === 'attribute' && ['append', 'extend'].includes(fn.childForFieldName('attribute')?.text ?? '');
  });
  return collects && ownDescendants(body, 'string').some((s) => DATA_EXTENSION.test(s.text));
}

/**
 * `names = listing`, then `names[i]` with a computed position (`[names[i] for i in perm[:cut]]`):
 * a split or a sample chosen by position takes whatever entry the listing put there.
 */
function readByPosition(target: Node, statement: Node, ctx: RuleContext): boolean {
  if (target.type !== 'identifier' && !isSelfAttribute(target)) return false;
  return orderedUses(target, statement, ctx).some((use) => {
    const read = use.parent;
    if (read?.type !== 'subscript' || !read.childForFieldName('value')?.equals(use)) return false;
    const index = read.childrenForFieldName('subscript');
    if (index.length !== 1) return false;
    if (computedSlice(index[0]!)) return !sortedOnceSliced(read, ctx);
    return COMPUTED_POSITION.has(index[0]!.type);
  });
}

/** A position worked out at run time (`files[i]`, `files[order[k]]`, `shards[epoch % len(shards)]`), not a literal. */
const COMPUTED_POSITION = new Set(['identifier', 'subscript', 'attribute', 'binary_operator']);

/**
 * A slice with a bound or step worked out at run time: `chunks[:world_size]` keeps the entries the
 * listing happens to put first, `files[rank::world_size]` deals them out to ranks. A literal slice
 * (`names[:5]`, a preview) is left out.
 */
function computedSlice(index: Node): boolean {
  return index.type === 'slice' && index.namedChildren.some((part) => COMPUTED_POSITION.has(part.type) || part.type === 'call');
}

function isSelfAttribute(node: Node): boolean {
  return node.type === 'attribute' && node.childForFieldName('object')?.text === 'self';
}

/**
 * `self.paths = [str(p) for p in names]` (or `= names`): the listing kept on the object, then read
 * by a computed position in any method of the class (`self.paths[(epoch - 1) % len(self.paths)]`:
 * which shard an epoch trains on).
 */
function keptThenReadByPosition(target: Node, statement: Node, ctx: RuleContext): boolean {
  if (target.type !== 'identifier') return false;
  return orderedUses(target, statement, ctx).some((use) => {
    const clause = use.parent;
    const value = clause?.type === 'for_in_clause' && clause.childForFieldName('right')?.equals(use) && clause.parent?.type === 'list_comprehension' ? clause.parent : use;
    const assignment = value.parent;
    const left = assignment?.type === 'assignment' && assignment.childForFieldName('right')?.equals(value) ? assignment.childForFieldName('left') : undefined;
    return !!left && isSelfAttribute(left) && readByPosition(left, assignment!, ctx);
  });
}

/**
 * `names = listing`, then `for name in names:` a loop that collects data files it names, reads
 * data files, or writes every entry into one output (`combined.write(line)`: a merged corpus in
 * listing order).
 */
function feedsDataCollectingLoop(target: Node, statement: Node, ctx: RuleContext): boolean {
  return orderedUses(target, statement, ctx).some((use) => {
    const consumer = consumerOf(use, ctx);
    return consumer.kind === 'loop' && (collectsNamedDataFiles(consumer.loop) || loopHandlesData(consumer.loop));
  });
}

/**
 * Where the order reaches data order: the listing is made in a class that holds samples (a
 * `Dataset`, or any class with `__getitem__`) and not only sorted after a slice; it is numbered or
 * paired by position (`enumerate`, `zip`); or it is walked by a loop that collects (or stored on an
 * object) while it names data files by extension (`*.jpg`, `*.npy`, shards), reads data files or
 * writes one merged output. Elsewhere (checkpoints, sysfs, source files, CI helpers) the order rarely reaches a tensor
 * or a sample: information (bench/truth sample: 1 of 5 listing warnings was real before this, the
 * real ones all dataset file lists or positional pairings).
 */
function orderIsVisible(call: Node, ctx: RuleContext): boolean {
  const consumer = consumerOf(call, ctx);
  if (consumer.kind === 'loop' && collectsOnlyIntoOrderFree(consumer.loop, ctx)) return false;
  if (inDatasetClass(call)) return !(consumer.kind === 'assigned' && sortedAfterSlice(consumer.target, consumer.statement, ctx));
  if ((consumer.kind === 'assigned' || consumer.kind === 'ordered' || consumer.kind === 'loop') && consumer.indexed) return true;
  if (consumer.kind === 'loop') return listsDataFiles(call) || loopHandlesData(consumer.loop) || collectsNamedDataFiles(consumer.loop);
  if (consumer.kind !== 'assigned') return false;
  if (readByPosition(consumer.target, consumer.statement, ctx) || keptThenReadByPosition(consumer.target, consumer.statement, ctx)) return true;
  // Stored on an object (`self.images = glob("*.png")`); returned, the receiver may still sort it.
  if (consumer.target.type === 'attribute') return listsDataFiles(call);
  return feedsDataCollectingLoop(consumer.target, consumer.statement, ctx);
}

/** `kept = names[:k]` and then `kept.sort()`: which entries are kept still follows the listing, but not their order. */
function sortedOnceSliced(slice: Node, ctx: RuleContext): boolean {
  const assignment = outermost(slice).parent;
  const left = assignment?.type === 'assignment' ? assignment.childForFieldName('left') : undefined;
  return !!left && left.type === 'identifier' && sortedLater(left, assignment!, ctx);
}

/** `names = listing`, then `kept = names[:k]` and `kept.sort()`: the order ends in the sort. */
function sortedAfterSlice(target: Node, statement: Node, ctx: RuleContext): boolean {
  const uses = orderedUses(target, statement, ctx);
  return (
    uses.length > 0 &&
    uses.every((use) => {
      const subscript = outermost(use).parent;
      const assignment = subscript?.type === 'subscript' ? outermost(subscript).parent : undefined;
      const left = assignment?.type === 'assignment' ? assignment.childForFieldName('left') : undefined;
      return !!left && left.type === 'identifier' && sortedLater(left, assignment!, ctx);
    })
  );
}

function check(call: Node, name: string, range: Range, ctx: RuleContext): void {
  if (!orderMatters(call, ctx)) return;
  const scandir = name === 'os.scandir';
  ctx.report({
    node: call,
    range,
    outcomes: always(
      orderIsVisible(call, ctx) ? 'warning' : 'info',
      fitMessage(`\`${name}\` lists entries in file-system order, which differs between machines and copies`, 'This listing comes in file-system order, which differs between machines and copies'),
      `The order differs between machines, file systems and even copies of the same data, so the sample order (and any split or id assigned by position) is not reproducible. Wrap it in \`sorted(...)\`${scandir ? ' with `key=lambda entry: entry.name`' : ''}.`,
    ),
    fixes: sortFix(call, scandir),
  });
}

function sortFix(call: Node, scandir: boolean): Fix[] {
  if (call.parent?.type === 'as_pattern') return [];
  const range = rangeOf(call);
  return [
    {
      title: 'Wrap the listing in sorted(...)',
      safety: 'safe',
      edits: [
        { range: { start: range.start, end: range.start }, newText: 'sorted(' },
        { range: { start: range.end, end: range.end }, newText: scandir ? ', key=lambda entry: entry.name)' : ')' },
      ],
    },
  ];
}

const rule: Rule = {
  id: 'BX305',
  name: 'unordered-file-listing',
  family: 'rng-data',
  defaultSeverity: 'warning',
  summary: 'A directory listing (`os.listdir`, `os.scandir`, `glob`, `Path.glob`/`rglob`/`iterdir`) is used in the order the file system returns.',
  facts: [
    { torch: '', source: 'docs', text: 'os.listdir and os.scandir return entries in arbitrary order; glob documents that whether its results are sorted depends on the file system' },
  ],
  triggers: ['listdir', 'scandir', 'glob', 'iglob', 'rglob', 'iterdir', '.ls('],
  calls: [...MODULE_LISTINGS, ...PATH_METHODS],
  onCall(call, ctx) {
    if (MODULE_LISTINGS.has(call.callee)) check(call.node, call.callee, callRange(call), ctx);
  },
  onFile: scanPathMethods,
  docs: `
\`os.listdir\` and \`os.scandir\` promise no order, and the \`glob\` documentation says that whether
its results come out sorted depends on the file system; \`pathlib\`'s \`glob\`, \`rglob\` and
\`iterdir\` inherit the same. On ext4 the order follows hash buckets of the names, on network and
object-store file systems it follows whatever the server returns, and a copy of the same dataset
can list differently from the original. Any code that turns a listing into a sequence of samples,
a train/validation split by position, class ids by enumeration or "the first checkpoint found"
then behaves differently on another machine or after the data moved.

A warning when the order reaches data order: the listing is made in a class that holds samples (a
\`Dataset\`, \`Sampler\`, \`DataPipe\`, or any class with \`__getitem__\`), numbered or paired by position
(\`enumerate\`, \`zip\`), read at a computed position or cut by a computed slice (\`files[i]\`,
\`chunks[:world_size]\`, \`shards[rank::world_size]\`: which entries a rank reads), or walked by a loop that collects (or stored on an object) while it names data
files by extension (\`*.jpg\`, \`*.wav\`, \`*.npy\`, \`*.parquet\`, \`*.tar\` shards...), reads data files
(\`Image.open\`, \`np.load\`, \`torch.load\`...) or writes every item into one merged output. Information elsewhere:
checkpoints, system files, source files and CI helpers rarely let the order reach a tensor or a
sample, and a listing returned or passed on may still be sorted by its receiver. A dataset's list
that is sliced and the slice sorted (\`kept = names[:k]; kept.sort()\`) is information too.

Reported when the listing's order can reach the program: it is returned, indexed, passed on, stored
(\`self.files = os.listdir(root)\`), or looped over by a loop that collects (\`append\`, \`+=\`,
\`yield\`, \`d[k] = ...\`), numbers (\`enumerate\`) or stops at the first match. Not reported: a listing
that is sorted (\`sorted(...)\`, \`natsorted\`, or \`.sort()\` on the name later), only tested for
emptiness or membership, counted, turned into a set, or looped over just to delete, copy or print
files. \`os.walk\` is not checked: its lists must be sorted in place inside the loop
(\`dirs.sort(); files.sort()\`), which a wrap cannot express.

The quick-fix wraps the call in \`sorted(...)\` (for \`os.scandir\`, with \`key=lambda entry: entry.name\`,
since directory entries do not compare). The order changes once, to one that stays put.

\`\`\`python
files = os.listdir(root)                          # BX305
for path in Path(root).rglob("*.png"):            # BX305 (the loop appends)
    samples.append(path)
files = sorted(glob.glob(f"{root}/*.jpg"))        # fine
if not os.listdir(out_dir): ...                   # fine: emptiness check
for f in glob.glob("/tmp/ckpt-*"): os.remove(f)   # fine: cleanup
\`\`\`
`,
};
export default rule;
