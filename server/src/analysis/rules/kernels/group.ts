// 4xx: custom kernels: Triton, CUDA/C++ sources, CuPy.
import type { Rule } from '../rule.js';

export const KERNELS_RULES: Rule[] = [];
