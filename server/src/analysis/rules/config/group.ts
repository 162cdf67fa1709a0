// Global PyTorch configuration: backend flags, deterministic mode switches, environment variables.
import BX201 from './BX201-cudnn-benchmark.js';

export const CONFIG_RULES = [BX201];
