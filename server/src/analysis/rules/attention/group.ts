// 5xx: attention and fused-kernel libraries.
import type { Rule } from '../rule.js';

export const ATTENTION_RULES: Rule[] = [];
