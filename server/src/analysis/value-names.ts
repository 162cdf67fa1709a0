// Naming conventions that say what a value is where the code shows no definition of it (a
// parameter, `ctx.cu_seqlens`): ValueHints (values.ts) reads a name through these.

/** What a name tells: an integer tensor without a gradient, distinct where `unique` says so. */
export interface NamedValue {
  dtype: 'int';
  origin: 'torch';
  unique?: 'flat';
  gradFree: true;
}

/**
 * `cu_seqlens` (flash-attention's varlen convention, followed by most packed-sequence code): the
 * cumulative lengths of packed sequences, strictly increasing offsets, so each sequence's first or
 * last position (`cu_seqlens[:-1]`, `cu_seqlens[1:] - 1`) is distinct. Read where the code shows no
 * definition (a parameter, `ctx.cu_seqlens`).
 */
const SEQUENCE_BOUNDARIES = /^cu_seq_?lens(_[a-z]+)?$/;
/** Other cumulative offsets of the same convention (`cu_k`, `segment_cu_q`): integers, without a gradient. */
const CUMULATIVE_OFFSETS = /(^|_)cu_[a-z]+$/;
/** Lengths and start offsets of packed segments (`seq_lens`, `segment_k_lengths`, `key_starts`), read without a definition. */
const SEGMENT_SIZES = /(^|_)(lens|lengths|seqlens|starts)$/;

/**
 * What a name says of its value by those conventions: where the code shows no definition, or (for
 * `cu_` offsets) one of unknown dtype (`torch.cat((zero, lengths.cumsum(0)))`).
 */
export function namedOffsets(name: string, defined: boolean): NamedValue | undefined {
  if (!defined && SEQUENCE_BOUNDARIES.test(name)) return { dtype: 'int', origin: 'torch', unique: 'flat', gradFree: true };
  return CUMULATIVE_OFFSETS.test(name) || (!defined && SEGMENT_SIZES.test(name)) ? { dtype: 'int', origin: 'torch', gradFree: true } : undefined;
}

/**
 * Graph code's index names (PyG's and DGL's conventions, which graph models written on them keep):
 * `edge_index` is the [2, E] list of each edge's two end nodes, `edge_type` each edge's relation,
 * `batch` the graph each node of a batch of graphs belongs to. A node ends as many edges as its
 * degree, a relation labels many edges and a graph holds many nodes, so as an index each repeats by
 * construction (a gather by it has an accumulating backward). Read for a name without a definition
 * in view (a parameter) or an attribute of that name (`data.edge_index`).
 */
const GRAPH_INDICES = new Set(['edge_index', 'edge_type', 'batch']);

export function isGraphIndexName(name: string): boolean {
  return GRAPH_INDICES.has(name);
}
