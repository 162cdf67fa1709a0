// 5xx: attention and fused-kernel libraries.
import BX501 from './BX501-flash-attn-nondeterministic-backward.js';
import BX502 from './BX502-transformers-flash-attention.js';
import BX503 from './BX503-xformers-memory-efficient-attention.js';
import BX504 from './BX504-sdpa-backend-choice.js';
import BX505 from './BX505-cudnn-frontend-attention-backward.js';
import BX506 from './BX506-te-allow-nondeterministic.js';
import type { Rule } from '../rule.js';

export const ATTENTION_RULES: Rule[] = [BX501, BX502, BX503, BX504, BX505, BX506];
