// 3xx: RNG seeding and data order.
import type { Rule } from '../rule.js';

export const SEEDS_RULES: Rule[] = [];
