// 6xx: distributed and framework flags, environment read at start-up.
import type { Rule } from '../rule.js';

export const DISTRIBUTED_RULES: Rule[] = [];
