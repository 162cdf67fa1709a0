// Whether code runs with gradients off: backward-only hazards (gather, index_select, pooling
// backward...) cannot happen under `with torch.no_grad():`, in an `@torch.inference_mode()` function,
// inside a custom `torch.autograd.Function`'s forward or backward (autograd records nothing there:
// the Function's own backward decides), in generation, sampling and decoding functions, and in the
// hooks that adapt a checkpoint while it loads (`checkpoint_filter_fn`, `load_state_dict` hooks).
import type { Node } from 'web-tree-sitter';
import { parentOf } from './parents.js';
import type { ImportScope } from './scope.js';

const NO_GRAD = new Set(['torch.no_grad', 'torch.inference_mode', 'torch.autograd.no_grad', 'torch.autograd.grad_mode.no_grad']);

export function runsWithoutGrad(node: Node, scope: ImportScope): boolean {
  for (let current = parentOf(node); current; current = parentOf(current)) {
    const parent = parentOf(current);
    if (current.type === 'block' && parent?.type === 'if_statement' && parent.childForFieldName('consequence')?.id === current.id) {
      if (INFERENCE_CONDITION.test(parent.childForFieldName('condition')?.text ?? '')) return true;
    } else if (current.type === 'with_statement') {
      const clause = current.namedChildren.find((c) => c.type === 'with_clause');
      for (const item of clause?.namedChildren ?? []) {
        if (item.type === 'with_item' && isNoGradExpression(item.childForFieldName('value'), scope)) return true;
      }
    } else if (current.type === 'function_definition') {
      const name = current.childForFieldName('name')?.text ?? '';
      if (NO_BACKWARD_NAME.test(name) || BACKWARD_NAME.test(name) || (AUTOGRAD_METHODS.has(name) && inAutogradFunction(current, scope))) return true;
      const decorated = parentOf(current);
      if (decorated?.type !== 'decorated_definition') return false;
      return decorated.namedChildren.some(
        (d) => d.type === 'decorator' && isNoGradExpression(d.namedChildren[0] ?? null, scope),
      );
    }
  }
  return false;
}

/**
 * Functions that generate, sample or decode: inference code, never differentiated. Spatial and
 * statistical sampling is differentiated (`_apply_pos_embed_grid_sample`, `point_sample`,
 * `importance_sampling_loss`), so `sample` after those words does not count.
 */
const NO_BACKWARD_NAME = /^_*(generate|sample|decode|greedy|beam_search|speculative|infer|inference|predict)(_|$)|_(generate|generation|decode|decoding|prefill|inference)(_|$)|(?<!grid|point|importance|up|down|sub)_(sample|sampling)(_|$)|(^|_)(checkpoint_filter_fn|filter_fn|load_state_dict|load_from_state_dict|state_dict_pre_hook|state_dict_hook|load_pretrained|load_checkpoint)$/i;
/**
 * Backward functions (`backward`, `_attn_bwd`, `scatter_add_backward`): autograd calls them with
 * gradient recording off, so what they call has no backward of its own.
 */
const BACKWARD_NAME = /^_*(backward|bwd)$|_(backward|bwd)$/;
/** Branches that run only when decoding or not training: `if is_decoding:`, `if not self.training:`. */
const INFERENCE_CONDITION = /\b(is_)?decod\w*|\binference\w*|\bnot\s+self\.training\b|\buse_cache\b|\bis_generating\b/;
const AUTOGRAD_METHODS = new Set(['forward', 'backward', 'setup_context', 'jvp', 'vjp']);
const AUTOGRAD_FUNCTION = /^torch\.autograd(\.function)?\.(Function|InplaceFunction)$/;

/** A method of a class deriving from torch.autograd.Function. */
function inAutogradFunction(method: Node, scope: ImportScope): boolean {
  let node: Node | null = method.parent;
  if (node?.type === 'decorated_definition') node = node.parent;
  const klass = node?.type === 'block' ? node.parent : null;
  if (klass?.type !== 'class_definition') return false;
  const bases = klass.childForFieldName('superclasses')?.namedChildren ?? [];
  return bases.some((base) => AUTOGRAD_FUNCTION.test(scope.resolveExpression(base) ?? ''));
}

function isNoGradExpression(node: Node | null, scope: ImportScope): boolean {
  if (!node) return false;
  const target = node.type === 'call' ? node.childForFieldName('function') : node;
  const qualified = target ? scope.resolveExpression(target) : undefined;
  if (qualified === undefined || !NO_GRAD.has(qualified)) return false;
  // torch.inference_mode(False) / no_grad is argument-free; a literal False turns it off.
  const first = node.type === 'call' ? node.childForFieldName('arguments')?.namedChildren[0] : undefined;
  return first?.type !== 'false';
}
