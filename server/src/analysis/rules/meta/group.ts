import BX001 from './BX001-unknown-suppression.js';
import BX002 from './BX002-unused-suppression.js';

export const META_RULES = [BX001, BX002];
