// Whether python3 can import torch (and use gloo), asked once for the whole test run by
// test/support/global-setup.ts, as a prerequisite for shouldSkip / assertPresent (test/e2e/prereq.ts).
import { inject } from 'vitest';
import type { Prerequisite } from '../e2e/prereq.js';
import './provided.js';

/** torch importable by python3; with `gloo`, also torch.distributed with the gloo backend. */
export function torchPrerequisite(need: 'torch' | 'gloo' = 'torch'): Prerequisite {
  const found = inject('torchFound');
  if (need === 'gloo') return { missing: found.gloo ? [] : ['python3 cannot import torch with gloo (pip install torch==2.13.0+cpu)'] };
  return { missing: found.torch ? [] : ['python3 cannot import torch (pip install torch==2.13.0+cpu)'] };
}
