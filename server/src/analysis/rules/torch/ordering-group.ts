// Ops whose output order (indices of ties) is not guaranteed.
import type { Rule } from '../rule.js';

export const ORDERING_RULES: Rule[] = [];
