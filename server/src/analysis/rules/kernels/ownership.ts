// Which program instance of a Triton launch owns an address: an atomic whose address depends on every
// program id the kernel reads (each through an injective step) is added to by one program only, so
// the adds of one launch never meet, and the atomic is an ordered read-modify-write onto what an
// earlier kernel left there. The classic hazard, a reduction across programs, leaves one program id
// out of the address (the split-K or sequence-block axis), collapses one (`pid_h // GROUP`: heads
// that share a slot), or scatters through indices loaded from memory, which may repeat.
import type { Node } from 'web-tree-sitter';
import { callArguments, literalValue, unparenthesize } from '../../syntax.js';
import type { RuleContext } from '../rule.js';
import { TL } from './triton.js';

/** How an address reaches one program id: as is (or scaled), or through `//` or `%` of it. */
type Step = 'direct' | 'div' | 'mod';

interface Reach {
  /** Per program-id axis, the steps by which the expression reaches it. */
  axes: Map<number, Set<Step>>;
  /** Reaches a value loaded from memory (a gather index that may repeat) or a value it cannot follow. */
  opaque: boolean;
}

/**
 * Tables that enumerate disjoint work (varlen starts, chunk lists, CSR row pointers): an index loaded
 * from one at a program-derived position stands for that program's own sequence or chunk.
 */
const WORK_TABLE = /(^|_)(cu_seqlens?\w*|chunk_indices|chunk_offsets|indptr|offsets|seq_starts?|seq_idx)$/i;
/** Calls that pass their first argument through: casts and compiler hints. */
const PASS_THROUGH = new Set(['to', 'multiple_of', 'max_contiguous', 'max_constancy', 'cast']);

function empty(): Reach {
  return { axes: new Map(), opaque: false };
}

function merge(into: Reach, other: Reach, step?: Step): void {
  into.opaque ||= other.opaque;
  for (const [axis, steps] of other.axes) {
    const target = into.axes.get(axis) ?? new Set<Step>();
    for (const s of steps) target.add(step && s === 'direct' ? step : s);
    into.axes.set(axis, target);
  }
}

/**
 * The values each name is bound to anywhere in the kernel (every branch: `if IS_VARLEN:` or not);
 * undefined for a name unpacked from a call, which cannot be followed.
 */
function bindingsOf(kernel: Node): Map<string, Node[] | undefined> {
  const bound = new Map<string, Node[] | undefined>();
  const add = (name: string, value: Node | undefined) => {
    if (!bound.has(name)) bound.set(name, []);
    const list = bound.get(name);
    if (list && value) list.push(value);
    else bound.set(name, undefined);
  };
  for (const assignment of kernel.descendantsOfType(['assignment', 'augmented_assignment'])) {
    const left = assignment.childForFieldName('left');
    const right = assignment.childForFieldName('right');
    if (!left || !right) continue;
    if (left.type === 'identifier') add(left.text, right);
    if (left.type !== 'pattern_list' && left.type !== 'tuple_pattern') continue;
    const items = right.type === 'expression_list' || right.type === 'tuple' ? right.namedChildren : [];
    left.namedChildren.forEach((target, i) => add(target.text, items.length === left.namedChildren.length ? items[i] : undefined));
  }
  return bound;
}

/** One question about one kernel: its bindings, read once, and each name's reach, worked out once. */
interface Walk {
  kernel: Node;
  ctx: RuleContext;
  bindings: Map<string, Node[] | undefined>;
  /** Parameters and loop variables (freeNamesOf). */
  free: Set<string>;
  names: Map<string, Reach>;
}

/** Names with no binding of their own that add no program id: the kernel's parameters and loop variables. */
function freeNamesOf(kernel: Node): Set<string> {
  const names = new Set<string>();
  for (const p of kernel.childForFieldName('parameters')?.namedChildren ?? []) {
    const id = p.type === 'identifier' ? p : (p.childForFieldName('name') ?? p.namedChildren[0]);
    if (id) names.add(id.text);
  }
  for (const loop of kernel.descendantsOfType('for_statement')) {
    const left = loop.childForFieldName('left');
    if (left?.type === 'identifier') names.add(left.text);
    for (const id of left?.descendantsOfType('identifier') ?? []) names.add(id.text);
  }
  return names;
}

function programAxis(call: Node, ctx: RuleContext): number | undefined {
  const fn = call.childForFieldName('function');
  if (!fn || ctx.scope.resolveExpression(fn) !== `${TL}.program_id`) return undefined;
  const args = callArguments(call);
  const axis = literalValue(args.positional[0] ?? args.keywords.get('axis'));
  return typeof axis === 'number' ? axis : undefined;
}

function reachOf(raw: Node | null | undefined, walk: Walk, depth: number): Reach {
  const { ctx } = walk;
  const reach = empty();
  if (!raw || depth > 64) return { ...reach, opaque: true };
  const node = unparenthesize(raw);
  switch (node.type) {
    case 'integer':
    case 'float':
    case 'true':
    case 'false':
    case 'none':
      return reach;
    case 'identifier': {
      const name = node.text;
      const known = walk.names.get(name);
      if (known) return known;
      const values = walk.bindings.has(name) ? walk.bindings.get(name) : [];
      if (values === undefined) return { ...reach, opaque: true };
      if (values.length === 0) return walk.free.has(name) ? reach : { ...reach, opaque: true };
      // Set before the values are read: a name updated from itself (`offs += BLOCK`) ends there.
      walk.names.set(name, reach);
      for (const value of values) merge(reach, reachOf(value, walk, depth + 1));
      return reach;
    }
    case 'binary_operator': {
      const operator = node.childForFieldName('operator')?.text;
      const step: Step | undefined = operator === '//' ? 'div' : operator === '%' ? 'mod' : undefined;
      const left = reachOf(node.childForFieldName('left'), walk, depth + 1);
      merge(reach, left, step);
      merge(reach, reachOf(node.childForFieldName('right'), walk, depth + 1), step);
      return reach;
    }
    case 'subscript':
      // `offs[:, None]`: the value's reach; the slice adds nothing.
      return reachOf(node.childForFieldName('value'), walk, depth + 1);
    case 'unary_operator':
      return reachOf(node.childForFieldName('argument'), walk, depth + 1);
    case 'attribute':
      // `x_ptr.dtype.element_ty`, `i.T`: not an address term of its own.
      return reach;
    case 'call': {
      const axis = programAxis(node, ctx);
      if (axis !== undefined) {
        reach.axes.set(axis, new Set(['direct']));
        return reach;
      }
      const fn = node.childForFieldName('function');
      const qualified = fn ? ctx.scope.resolveExpression(fn) : undefined;
      const args = callArguments(node);
      if (qualified === `${TL}.load`) {
        const pointer = args.positional[0] ?? args.keywords.get('pointer');
        const base = pointer ? unparenthesize(pointer).descendantsOfType('identifier')[0] : undefined;
        if (!base || !WORK_TABLE.test(base.text)) return { ...reach, opaque: true };
        merge(reach, reachOf(pointer, walk, depth + 1));
        return reach;
      }
      const method = fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
      if (method && PASS_THROUGH.has(method)) return reachOf(fn!.childForFieldName('object'), walk, depth + 1);
      if (qualified === `${TL}.arange` || qualified === `${TL}.zeros` || qualified === `${TL}.full`) return reach;
      const last = qualified?.split('.').pop();
      if (qualified?.startsWith(`${TL}.`) && last && PASS_THROUGH.has(last)) return reachOf(args.positional[0], walk, depth + 1);
      // Other tl helpers (`tl.cdiv`, `tl.where`, `tl.minimum`): what their arguments reach.
      if (!qualified?.startsWith(`${TL}.`)) return { ...reach, opaque: true };
      for (const arg of [...args.positional, ...args.keywords.values()]) merge(reach, reachOf(arg, walk, depth + 1));
      return reach;
    }
    default:
      return { ...reach, opaque: true };
  }
}

/** The program-id axes the kernel reads. */
function kernelAxes(kernel: Node, ctx: RuleContext): Set<number> | undefined {
  const axes = new Set<number>();
  for (const call of kernel.descendantsOfType('call')) {
    const fn = call.childForFieldName('function');
    if (!fn || ctx.scope.resolveExpression(fn) !== `${TL}.program_id`) continue;
    const axis = programAxis(call, ctx);
    if (axis === undefined) return undefined;
    axes.add(axis);
  }
  return axes;
}

/**
 * Is the address `pointer` owned by one program of the launch? Every program-id axis the kernel
 * reads must reach the address as is, or through both `//` and `%` (a flat id split into two), and
 * nothing loaded from memory may reach it, except indices read from a table of disjoint work.
 */
export function ownedByProgram(pointer: Node | undefined, kernel: Node, ctx: RuleContext): boolean {
  if (!pointer) return false;
  const axes = kernelAxes(kernel, ctx);
  if (!axes || axes.size === 0) return false;
  const reach = reachOf(pointer, { kernel, ctx, bindings: bindingsOf(kernel), free: freeNamesOf(kernel), names: new Map() }, 0);
  if (reach.opaque) return false;
  for (const axis of axes) {
    const steps = reach.axes.get(axis);
    if (!steps || !(steps.has('direct') || (steps.has('div') && steps.has('mod')))) return false;
  }
  return true;
}
