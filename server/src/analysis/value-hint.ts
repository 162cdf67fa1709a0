// What ValueHints (values.ts) answers about one expression, shared with the modules that compute
// parts of it (call-values.ts).
import type { DTypeClass } from './value-vocabulary.js';

export interface ValueHint {
  dtype: DTypeClass;
  /** 'numpy' for NumPy/pandas values: CPU, never a torch kernel. */
  origin: 'torch' | 'numpy' | 'unknown';
  rank?: number;
  sparse?: boolean;
  /**
   * An index without repeated entries: 'flat' over all its elements (randperm, arange, unique),
   * 'rows' along the dimension it was made for (argsort, sort and top-k indices per row), which a
   * flatten or view breaks; 'coords': the rows of `nonzero()`, of an input of rank `coordinates`.
   */
  unique?: 'flat' | 'rows' | 'coords';
  coordinates?: number;
  /** Cannot require grad (grad-values.ts): a factory's leaf, a `.detach()`, a registered buffer, a number. */
  gradFree?: boolean;
  /** Put on the CPU by the code (`.cpu()`, `device="cpu"`). */
  cpu?: boolean;
}

export const UNKNOWN: ValueHint = { dtype: 'unknown', origin: 'unknown' };
