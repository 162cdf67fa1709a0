// DataLoader arguments shared by BX303 (workers) and BX304 (shuffle): positions follow
// torch.utils.data.DataLoader(dataset, batch_size, shuffle, sampler, batch_sampler, num_workers,
// collate_fn, pin_memory, drop_last, timeout, worker_init_fn, multiprocessing_context, generator).
import type { Node } from 'web-tree-sitter';
import type { CallSite } from '../../calls.js';
import { argument, literalValue } from '../../syntax.js';

export const DATALOADERS = ['torch.utils.data.DataLoader', 'torch.utils.data.dataloader.DataLoader'];
export const RANDOM_SAMPLERS = ['torch.utils.data.RandomSampler', 'torch.utils.data.sampler.RandomSampler'];

const POSITION: Record<string, number> = { shuffle: 2, sampler: 3, num_workers: 5, worker_init_fn: 10, generator: 12 };

/** The DataLoader argument `name`, by keyword or position. */
export function loaderArgument(call: CallSite, name: keyof typeof POSITION | string): Node | undefined {
  return argument(call.args, POSITION[name] ?? -1, name);
}

/** Passed and not a literal None. */
export function given(node: Node | undefined): boolean {
  return !!node && literalValue(node) !== null;
}
