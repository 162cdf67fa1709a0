// Every rule, sorted by id. Adding a rule: copy a file in its family folder, edit it, list it in
// that folder's group file, and add its fixture under test/fixtures/rules/.
import { CONFIG_RULES } from './config/group.js';
import { META_RULES } from './meta/group.js';
import { ACCUMULATION_RULES } from './torch/accumulation-group.js';
import { KERNEL_RULES } from './torch/kernel-group.js';
import { ORDERING_RULES } from './torch/ordering-group.js';
import type { Rule } from './rule.js';

export const RULES: readonly Rule[] = [...META_RULES, ...ACCUMULATION_RULES, ...KERNEL_RULES, ...ORDERING_RULES, ...CONFIG_RULES].sort((a, b) =>
  a.id.localeCompare(b.id),
);
