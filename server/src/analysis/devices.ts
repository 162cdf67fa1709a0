// Tensors known to live on the CPU: built in the function from host data or sizes by a torch factory
// without a `device=`, and never moved (`.to(...)`, `.cuda()`) before the op. A CPU kernel has no
// atomics to race, so a CUDA-only hazard is none there. The same walk answers whether a tensor is a
// constant (made here from host data or sizes on any device, `requires_grad` off): no gradient
// reaches it, so a hazard in the backward of an op on it never runs. Data preparation is the usual shape
// (`features = torch.FloatTensor(array)`, a normalisation, `.to(device)` only at the return). A file
// that changes the default device (`torch.set_default_device`, `set_default_tensor_type`) has no
// CPU facts; anything not followed to its making (a parameter, an attribute, a call's result) is unknown.
import type { Node } from 'web-tree-sitter';
import type { ImportScope } from './scope.js';
import { argument, callArguments, literalValue, unparenthesize } from './syntax.js';
import type { ValueHints } from './values.js';

/** Factories whose arguments are sizes (or fill values): the tensor is made on the default device. */
const SIZE_FACTORIES = new Set(['zeros', 'ones', 'empty', 'eye', 'rand', 'randn', 'randint', 'randperm', 'arange', 'full', 'linspace', 'logspace']);
/** Tensor methods that move a tensor (or may): the result's device is not the receiver's. */
const MOVES = new Set(['to', 'cuda', 'pin_memory', 'type', 'new_tensor', 'new_zeros', 'new_ones', 'new_empty', 'new_full']);
/** Builtins whose result is a Python number. */
const SIZES = new Set(['len', 'int', 'float', 'round']);
/** Methods whose arguments are sizes or dimensions, never tensors. */
const SHAPE_ONLY = new Set(['view', 'reshape', 'expand', 'permute', 'repeat', 'flatten', 'unflatten', 'transpose', 'unsqueeze', 'squeeze', 'contiguous', 'clone', 'detach', 'float', 'half', 'double', 'bfloat16', 'narrow', 't', 'to_sparse', 'flip', 'roll']);
const DEFAULT_DEVICE = /\bset_default_(device|tensor_type)\b/;
const MAX_DEPTH = 30;

/**
 * The tensors an enclosing `if` tests to be off CUDA (`if not x.is_cuda and ...:`,
 * `if x.device.type == "cpu":`, `if x.is_cpu:`), as their text: in that branch they are on the CPU
 * (a CPU-only fast path, with the CUDA one after it). Only conjuncts of an `and` chain count.
 */
function cpuTestsAround(node: Node): Set<string> {
  const tested = new Set<string>();
  for (let child = node, parent = node.parent; parent; child = parent, parent = parent.parent) {
    if (parent.type !== 'if_statement' && parent.type !== 'elif_clause') continue;
    if (!parent.childForFieldName('consequence')?.equals(child)) continue;
    const condition = parent.childForFieldName('condition');
    if (condition) for (const conjunct of conjuncts(condition)) {
      const tensor = cpuTest(conjunct);
      if (tensor) tested.add(tensor);
    }
  }
  return tested;
}

function conjuncts(node: Node): Node[] {
  const expr = unparenthesize(node);
  if (expr.type !== 'boolean_operator' || expr.childForFieldName('operator')?.text !== 'and') return [expr];
  return [expr.childForFieldName('left'), expr.childForFieldName('right')].flatMap((side) => (side ? conjuncts(side) : []));
}

/** The tensor a condition says is on the CPU: `not x.is_cuda` / `not x.is_cuda()`, `x.is_cpu`, `x.device.type == "cpu"`. */
function cpuTest(raw: Node): string | undefined {
  const expr = unparenthesize(raw);
  const property = (n: Node | null | undefined, name: string) => {
    const e = n && unparenthesize(n);
    const attr = e?.type === 'call' ? e.childForFieldName('function') : e;
    return attr?.type === 'attribute' && attr.childForFieldName('attribute')?.text === name ? attr.childForFieldName('object')?.text : undefined;
  };
  if (expr.type === 'not_operator') return property(expr.childForFieldName('argument'), 'is_cuda');
  if (expr.type === 'comparison_operator' && expr.namedChildCount === 2 && expr.children.some((c) => c.text === '==')) {
    const [left, right] = expr.namedChildren;
    const device = property(left, 'type');
    return literalValue(right) === 'cpu' && device?.endsWith('.device') ? device.slice(0, -'.device'.length) : undefined;
  }
  return property(expr, 'is_cpu');
}

/** Is `node` (or the tensor it was made from by method calls, `src.to_sparse_csr()`) tested off CUDA around it? */
function testedOffCuda(node: Node, values: ValueHints): boolean {
  const tested = cpuTestsAround(node);
  if (tested.size === 0) return false;
  let expr: Node | null = unparenthesize(node);
  for (let depth = 0; expr && depth < 8; depth++) {
    if (tested.has(expr.text)) return true;
    if (expr.type === 'identifier') {
      const bound = values.definition(expr);
      expr = bound && !bound.unpacked ? unparenthesize(bound.value) : null;
    } else if (expr.type === 'call') {
      const fn = expr.childForFieldName('function');
      expr = fn?.type === 'attribute' ? fn.childForFieldName('object') : null;
    } else expr = null;
  }
  return false;
}

export class Devices {
  private readonly memo = new Map<string, boolean>();
  private readonly defaultMoved: boolean;
  /** The question being answered: on the CPU, or constant (no gradient: made here, requires_grad off). */
  private question: 'cpu' | 'constant' = 'cpu';

  constructor(
    private readonly scope: ImportScope,
    private readonly values: ValueHints,
    text: string,
  ) {
    this.defaultMoved = DEFAULT_DEVICE.test(text);
  }

  /** Is `node` a torch tensor on the CPU, by how the function made it or by the branch it is in? */
  isCpu(node: Node | undefined): boolean {
    if (!node || this.defaultMoved) return false;
    this.question = 'cpu';
    return this.cpu(node, 0) || testedOffCuda(node, this.values);
  }

  /**
   * Is `node` a tensor made in the function from host data or sizes (on any device) that no
   * gradient reaches: no `requires_grad=True`, no parameter or input among what it is made from.
   * A backward-only hazard of an op on it has no backward to run.
   */
  isConstant(node: Node | undefined): boolean {
    if (!node) return false;
    this.question = 'constant';
    return this.cpu(node, 0);
  }

  private cpu(node: Node, depth: number): boolean {
    if (depth > MAX_DEPTH) return false;
    const key = `${this.question}${node.id}`;
    const cached = this.memo.get(key);
    if (cached !== undefined) return cached;
    this.memo.set(key, false); // cuts cycles such as x = x + 1
    const answer = this.compute(unparenthesize(node), depth + 1);
    this.memo.set(key, answer);
    return answer;
  }

  /** A CPU tensor or a host value (a literal, a NumPy array, a list of them): it moves nothing to the GPU. */
  private host(node: Node, depth: number): boolean {
    const expr = unparenthesize(node);
    if (depth > MAX_DEPTH) return false;
    if (literalValue(expr) !== undefined || this.values.of(expr).origin === 'numpy') return true;
    if (expr.type === 'list' || expr.type === 'tuple') return expr.namedChildren.every((c) => this.host(c, depth + 1));
    // A view of host data (`table[:, :2].T`) or a size read off a tensor (`x.shape[0]`, `len(rows)`).
    if (expr.type === 'subscript') return this.host(expr.childForFieldName('value')!, depth + 1);
    if (expr.type === 'attribute') {
      const name = expr.childForFieldName('attribute')?.text;
      if (name === 'shape') return true;
      if (name === 'T' || name === 'mT') return this.host(expr.childForFieldName('object')!, depth + 1);
    }
    if (expr.type === 'call') {
      const fn = expr.childForFieldName('function');
      if (fn?.type === 'identifier' && SIZES.has(fn.text) && !this.scope.isImportedName(fn.text)) return true;
      if (fn?.type === 'attribute' && ['size', 'numel', 'dim', 'item', 'tolist'].includes(fn.childForFieldName('attribute')?.text ?? '')) return true;
    }
    if (expr.type === 'identifier') {
      const bound = this.values.definition(expr);
      if (bound && !bound.unpacked && this.host(bound.value, depth + 1)) return true;
      // `B, C, H, W = x.shape`: sizes.
      if (bound?.unpacked && (/\.shape$/.test(bound.value.text) || /\.size\(\)$/.test(bound.value.text))) return true;
    }
    return this.cpu(expr, depth);
  }

  private compute(node: Node, depth: number): boolean {
    switch (node.type) {
      case 'identifier': {
        const bound = this.values.definition(node);
        return !!bound && !bound.unpacked && this.cpu(bound.value, depth);
      }
      case 'subscript':
        return this.cpu(node.childForFieldName('value')!, depth);
      case 'binary_operator': {
        const left = node.childForFieldName('left');
        const right = node.childForFieldName('right');
        if (!left || !right) return false;
        // At least one side is a tensor made here; the other may be a number.
        return (this.cpu(left, depth) && this.host(right, depth)) || (this.host(left, depth) && this.cpu(right, depth));
      }
      case 'call':
        return this.call(node, depth);
      default:
        return false;
    }
  }

  private call(node: Node, depth: number): boolean {
    const fn = node.childForFieldName('function');
    if (!fn) return false;
    const args = callArguments(node);
    const qualified = this.scope.resolveExpression(fn);
    if (qualified !== undefined) {
      if (!qualified.startsWith('torch.') || args.hasSplat) return false;
      if (this.question === 'constant') {
        // A parameter or module is not made from constants; requires_grad=True asks for a gradient.
        if (/^torch\.nn\.(?!functional\.)/.test(qualified) || literalValue(args.keywords.get('requires_grad')) !== undefined && literalValue(args.keywords.get('requires_grad')) !== false) return false;
      } else {
        const device = args.keywords.get('device');
        if (device) return literalValue(device) === 'cpu';
      }
      const name = qualified.slice(qualified.lastIndexOf('.') + 1);
      if (SIZE_FACTORIES.has(name)) return true;
      // Anything else (torch.tensor(data), torch.FloatTensor(array), torch.sum(x), torch.diag(x),
      // sparse_coo_tensor(indices, values)) is made where its inputs are.
      return args.positional.length > 0 && args.positional.every((a) => this.host(a, depth));
    }
    if (fn.type !== 'attribute') return false;
    const method = fn.childForFieldName('attribute')?.text ?? '';
    const receiver = fn.childForFieldName('object');
    if (!receiver) return false;
    if (this.question === 'constant') {
      // Moves and casts keep a constant constant; requires_grad_() makes it a leaf with a gradient.
      if (method === 'requires_grad_' || method === 'requires_grad') return false;
      if (method === 'to' || method === 'cuda' || method === 'cpu' || method === 'type') return this.cpu(receiver, depth);
    }
    if (method === 'cpu') return true;
    if (method === 'to') {
      // `.to(torch.float32)` changes the dtype only; `.to("cpu")` moves to the CPU.
      const target = argument(args, 0, 'device') ?? argument(args, 0, 'dtype');
      if (literalValue(target) === 'cpu') return true;
      const dtypeOnly = !!target && !args.keywords.has('device') && /^torch\.(u?int\d*|float\d*|bfloat16|half|double|long|bool|complex\d*)$/.test(this.scope.resolveExpression(target) ?? '');
      return dtypeOnly && this.cpu(receiver, depth);
    }
    if (MOVES.has(method)) return false;
    // `const.mm(weight)`: for a gradient, what the method takes counts as much as its receiver.
    if (this.question === 'constant' && !SHAPE_ONLY.has(method) && (args.hasSplat || !args.positional.every((a) => this.host(a, depth)) || ![...args.keywords.values()].every((a) => this.host(a, depth)))) return false;
    return this.cpu(receiver, depth);
  }
}
