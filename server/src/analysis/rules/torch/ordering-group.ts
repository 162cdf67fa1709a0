// Ops whose output order (indices of ties) is not guaranteed.
import type { Rule } from '../rule.js';
import BX135 from './BX135-sort-unstable-indices.js';
import BX136 from './BX136-topk-unsorted.js';

export const ORDERING_RULES: Rule[] = [BX135, BX136];
