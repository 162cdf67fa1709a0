// Every rule, sorted by id. Adding a rule: copy a file in its family folder, edit it, list it in
// that folder's group file, and add its fixture under test/fixtures/rules/.
import { CONFIG_RULES } from './config/group.js';
import { META_RULES } from './meta/group.js';
import { ACCUMULATION_RULES } from './torch/accumulation-group.js';
import { KERNEL_RULES } from './torch/kernel-group.js';
import { ORDERING_RULES } from './torch/ordering-group.js';
import { ATTENTION_RULES } from './attention/group.js';
import { DISTRIBUTED_RULES } from './distributed/group.js';
import { KERNELS_RULES } from './kernels/group.js';
import type { Rule } from './rule.js';
import { SEEDS_RULES } from './seeds/group.js';

export const RULES: readonly Rule[] = [
  ...META_RULES,
  ...ACCUMULATION_RULES,
  ...KERNEL_RULES,
  ...ORDERING_RULES,
  ...CONFIG_RULES,
  ...SEEDS_RULES,
  ...KERNELS_RULES,
  ...ATTENTION_RULES,
  ...DISTRIBUTED_RULES,
].sort((a, b) =>
  a.id.localeCompare(b.id),
);
