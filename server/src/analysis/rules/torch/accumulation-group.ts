// Scatter, index and put families: ops that accumulate or write through an index.
import BX101 from './BX101-index-add.js';
import BX102 from './BX102-scatter-add.js';
import BX103 from './BX103-scatter-reduce-sum-mean.js';
import BX104 from './BX104-scatter-reduce-prod.js';
import BX105 from './BX105-scatter-duplicate-write.js';
import BX106 from './BX106-index-copy-duplicates.js';
import BX107 from './BX107-index-put-duplicates.js';
import BX108 from './BX108-put-nondeterministic.js';
import BX109 from './BX109-gather-backward.js';
import BX110 from './BX110-index-select-backward.js';
import BX111 from './BX111-repeat-interleave-backward.js';
import BX112 from './BX112-take-backward.js';
import BX113 from './BX113-index-reduce.js';
import BX114 from './BX114-embedding-bag-max-backward.js';
import BX115 from './BX115-bincount-weights.js';
import BX116 from './BX116-histc-cuda.js';
import BX117 from './BX117-median-indices.js';
import BX139 from './BX139-scatter-wrapper.js';
import BX140 from './BX140-compiled-embedding-backward.js';

export const ACCUMULATION_RULES = [BX101, BX102, BX103, BX104, BX105, BX106, BX107, BX108, BX109, BX110, BX111, BX112, BX113, BX114, BX115, BX116, BX117, BX139, BX140];
