// Whether code runs with gradients off: backward-only hazards (gather, index_select, pooling
// backward...) cannot happen under `with torch.no_grad():` or in an `@torch.inference_mode()` function.
import type { Node } from 'web-tree-sitter';
import type { ImportScope } from './scope.js';

const NO_GRAD = new Set(['torch.no_grad', 'torch.inference_mode', 'torch.autograd.no_grad', 'torch.autograd.grad_mode.no_grad']);

export function runsWithoutGrad(node: Node, scope: ImportScope): boolean {
  for (let current = node.parent; current; current = current.parent) {
    if (current.type === 'with_statement') {
      const clause = current.namedChildren.find((c) => c.type === 'with_clause');
      for (const item of clause?.namedChildren ?? []) {
        if (item.type === 'with_item' && isNoGradExpression(item.childForFieldName('value'), scope)) return true;
      }
    } else if (current.type === 'function_definition') {
      const decorated = current.parent;
      if (decorated?.type !== 'decorated_definition') return false;
      return decorated.namedChildren.some(
        (d) => d.type === 'decorator' && isNoGradExpression(d.namedChildren[0] ?? null, scope),
      );
    }
  }
  return false;
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
