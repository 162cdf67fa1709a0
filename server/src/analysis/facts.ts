// Program facts: does the checked code turn PyTorch's deterministic mode on (directly or through a
// framework), and how. Collected per file, merged over every checked file by the caller.
import type { Node } from 'web-tree-sitter';
import type { CallSite } from './calls.js';
import { argument, literalValue } from './syntax.js';
import { placeOf } from './place.js';
import type { DeterministicMode, Range } from './types.js';
import { rangeOf } from './syntax.js';

export interface ModeSetting {
  /** What the call sets; a non-literal flag (`use_deterministic_algorithms(args.det)`) counts as 'on'. */
  mode: DeterministicMode;
  /**
   * True when the program can run either way: the value is not a literal, or the call stands under
   * a condition in its function (program.ts).
   */
  conditional: boolean;
  /** The innermost function the call stands in; undefined at module level. */
  function?: string;
  via: string;
  range: Range;
}

const LIGHTNING_TRAINERS = new Set(['lightning.Trainer', 'lightning.pytorch.Trainer', 'pytorch_lightning.Trainer']);

/** Every callee modeSettingOf understands (the engine reads arguments only for these and rules' callees). */
export const MODE_SWITCHES = new Set([
  'torch.use_deterministic_algorithms', 'torch.set_deterministic_debug_mode', 'transformers.enable_full_determinism',
  'transformers.trainer_utils.enable_full_determinism', 'transformers.set_seed', 'transformers.trainer_utils.set_seed',
  ...LIGHTNING_TRAINERS,
]);

/** The mode a call sets, if it is one of the known switches. */
export function modeSettingOf(call: CallSite): ModeSetting | undefined {
  const range = rangeOf(call.node);
  const via = call.callee;
  const place = placeOf(call.node);
  // Switched on around one piece of work and restored in a `finally`: local, not the program's mode.
  const restored = place.function !== undefined && restoredLater(call.node);
  const make = (mode: DeterministicMode, conditional = false): ModeSetting => ({ mode, conditional: conditional || place.conditional || restored, function: place.function, via, range });
  switch (call.callee) {
    case 'torch.use_deterministic_algorithms': {
      const flag = argument(call.args, 0, 'mode');
      const value = literalValue(flag);
      const warnOnly = literalValue(call.args.keywords.get('warn_only'));
      if (value === false) return make('off');
      const mode = warnOnly === true ? 'warn' : 'on';
      return make(mode, value !== true);
    }
    case 'torch.set_deterministic_debug_mode': {
      const value = literalValue(argument(call.args, 0, 'debug_mode'));
      if (value === 'error' || value === 2) return make('on');
      if (value === 'warn' || value === 1) return make('warn');
      if (value === 'default' || value === 0) return make('off');
      return make('on', true);
    }
    case 'transformers.enable_full_determinism':
    case 'transformers.trainer_utils.enable_full_determinism':
      return make('on');
    case 'transformers.set_seed':
    case 'transformers.trainer_utils.set_seed': {
      const value = literalValue(argument(call.args, 1, 'deterministic'));
      return value === true ? make('on') : undefined;
    }
    default: {
      if (!LIGHTNING_TRAINERS.has(call.callee)) return undefined;
      const flag = call.args.keywords.get('deterministic');
      const value = literalValue(flag);
      if (!flag || value === false || value === null) return undefined;
      return value === 'warn' ? make('warn') : make('on', value !== true);
    }
  }
}

/** Is the mode switched again in a `finally` of the same function (a wrapper restoring the previous mode)? */
function restoredLater(node: Node): boolean {
  let fn: Node | null = node.parent;
  while (fn && fn.type !== 'function_definition') fn = fn.parent;
  return !!fn && fn.descendantsOfType('finally_clause').some((f) => f.startIndex > node.startIndex && f.text.includes('use_deterministic_algorithms'));
}
