// 6xx: distributed and framework flags, environment read at start-up.
import type { Rule } from '../rule.js';
import BX601 from './BX601-nccl-algo.js';
import BX602 from './BX602-env-set-too-late.js';
import BX603 from './BX603-pythonhashseed-in-process.js';
import BX604 from './BX604-megatron-deterministic-incompatible.js';

export const DISTRIBUTED_RULES: Rule[] = [BX601, BX602, BX603, BX604];
