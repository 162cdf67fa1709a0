// Every rule, in id order. Adding a rule: copy a file in the family folder, edit it, list it here,
// and add its fixture under test/fixtures/rules/.
import type { Rule } from './rule.js';
import BX001 from './meta/BX001-unknown-suppression.js';
import BX002 from './meta/BX002-unused-suppression.js';
import BX101 from './torch/BX101-index-add.js';
import BX102 from './torch/BX102-scatter-add.js';
import BX201 from './config/BX201-cudnn-benchmark.js';

export const RULES: readonly Rule[] = [BX001, BX002, BX101, BX102, BX201];
