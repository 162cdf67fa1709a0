// Global PyTorch configuration: backend flags, deterministic mode switches, environment variables.
import BX201 from './BX201-cudnn-benchmark.js';
import BX202 from './BX202-cudnn-deterministic-off.js';
import BX203 from './BX203-deterministic-warn-only.js';
import BX204 from './BX204-deterministic-mode-disabled.js';
import BX205 from './BX205-misspelt-backend-flag.js';
import BX206 from './BX206-cublas-workspace-config.js';
import BX207 from './BX207-fill-uninitialized-memory-off.js';
import BX208 from './BX208-compile-max-autotune.js';

export const CONFIG_RULES = [BX201, BX202, BX203, BX204, BX205, BX206, BX207, BX208];
