// Kernels whose backward (or forward) is nondeterministic on CUDA: scans, sparse, conv, resampling,
// pooling, padding, losses, and library kernels (torchvision's region pooling, Mamba's fused scan).
import BX118 from './BX118-cumsum-float.js';
import BX119 from './BX119-cumprod-logcumsumexp.js';
import BX120 from './BX120-sparse-mm.js';
import BX121 from './BX121-bmm-sparse.js';
import BX122 from './BX122-conv-cudnn.js';
import BX123 from './BX123-interpolate-backward.js';
import BX124 from './BX124-grid-sample-backward.js';
import BX125 from './BX125-avg-pool3d-backward.js';
import BX126 from './BX126-adaptive-avg-pool-backward.js';
import BX127 from './BX127-adaptive-max-pool2d-backward.js';
import BX128 from './BX128-max-pool3d-backward.js';
import BX129 from './BX129-fractional-max-pool-backward.js';
import BX130 from './BX130-max-unpool.js';
import BX131 from './BX131-reflection-pad-backward.js';
import BX132 from './BX132-replication-pad-backward.js';
import BX133 from './BX133-nll-loss-nd.js';
import BX134 from './BX134-ctc-loss-backward.js';
import BX137 from './BX137-roi-pooling-backward.js';
import BX138 from './BX138-mamba-fused-scan-backward.js';
import type { Rule } from '../rule.js';

export const KERNEL_RULES: Rule[] = [
  BX118, BX119, BX120, BX121, BX122, BX123, BX124, BX125, BX126,
  BX127, BX128, BX129, BX130, BX131, BX132, BX133, BX134, BX137, BX138,
];
