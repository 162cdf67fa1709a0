// 3xx: RNG seeding and data order.
import type { Rule } from '../rule.js';
import BX301 from './BX301-unseeded-entry-point.js';
import BX302 from './BX302-time-derived-seed.js';
import BX303 from './BX303-dataloader-workers-unseeded.js';
import BX304 from './BX304-dataloader-shuffle-no-generator.js';
import BX305 from './BX305-unordered-file-listing.js';
import BX306 from './BX306-set-iteration-order.js';
import BX307 from './BX307-builtin-hash-for-sharding.js';
import BX308 from './BX308-completion-order.js';
import BX309 from './BX309-numpy-global-rng-in-dataset.js';
import BX310 from './BX310-sklearn-split-unseeded.js';
import BX311 from './BX311-set-seed-not-deterministic.js';
import BX312 from './BX312-global-rng-unseeded.js';
import BX313 from './BX313-init-before-seed.js';
import BX314 from './BX314-hogwild-shared-model.js';
import BX316 from './BX316-webdataset-shuffle-unseeded.js';

export const SEEDS_RULES: Rule[] = [BX301, BX302, BX303, BX304, BX305, BX306, BX307, BX308, BX309, BX310, BX311, BX312, BX313, BX314, BX316];
