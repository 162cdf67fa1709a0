// 4xx: custom kernels: Triton, CUDA/C++ sources, CuPy, CuTe DSL and cuTile.
import BX401 from './BX401-triton-float-atomic.js';
import BX402 from './BX402-triton-atomic-slot-order.js';
import BX403 from './BX403-triton-autotune-reduction.js';
import BX404 from './BX404-cuda-source-float-atomic.js';
import BX405 from './BX405-cuda-source-atomic-slot-order.js';
import BX406 from './BX406-cute-float-atomic.js';
import BX409 from './BX409-compiled-extension-float-atomic.js';
import type { Rule } from '../rule.js';

export const KERNELS_RULES: Rule[] = [BX401, BX402, BX403, BX404, BX405, BX406, BX409];
