// Kernels whose backward (or forward) is nondeterministic on CUDA: scans, sparse, conv, resampling,
// pooling, padding and losses.
import type { Rule } from '../rule.js';

export const KERNEL_RULES: Rule[] = [];
