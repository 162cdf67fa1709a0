// Scatter, index and put families: ops that accumulate or write through an index.
import BX101 from './BX101-index-add.js';
import BX102 from './BX102-scatter-add.js';

export const ACCUMULATION_RULES = [BX101, BX102];
