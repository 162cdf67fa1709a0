// Cheap, local facts about values: the dtype class of a tensor expression (integer accumulation
// is exact, so scatter/index adds on integers are not a value hazard), whether it is a NumPy
// array, its rank, whether it is sparse, and whether it is an index that cannot repeat (a
// permutation, sort or per-row top-k indices, nonzero positions, an arange). Names are followed to their nearest earlier
// assignment in the same function; anything more is "unknown", never a guess.
import type { Node } from 'web-tree-sitter';
import type { ImportScope } from './scope.js';
import { callValue } from './call-values.js';
import { UNKNOWN, type ValueHint } from './value-hint.js';
import { isNumber, isRowMajorIndex, nonzeroCoordinate, repeatsByConstruction, singletonDims } from './index-facts.js';
import { uniqueCoordinate } from './routing-masks.js';
import { ScopeCache } from './scope-cache.js';
import { initOf, isBuffer } from './members.js';
import { calledFunction, returnedElement } from './returns.js';
import { namedOffsets } from './value-names.js';
import { filledGradFree, globalGradFree, writtenInPlace } from './grad-values.js';
import { isKnownTensor } from './tensor-evidence.js';
import { isUniformFill } from './uniform-values.js';
import { leastRank } from './min-rank.js';
import { enclosingFunction, parameterDefault, unparenthesize } from './syntax.js';
import { UNIQUE_INDICES, VALUES_AND_INDICES } from './value-vocabulary.js';


function isScopeNode(node: Node): boolean {
  return node.type === 'function_definition' || node.type === 'class_definition' || node.type === 'module' || node.type === 'lambda';
}

interface Binding {
  /** The assigned expression; for unpacking, the whole right-hand side. */
  value: Node | undefined;
  /** For `a, b = rhs`: this name's position in the target tuple. */
  position?: number;
  end: number;
}

/** The assignments inside a scope's text range (more is harmless: each is bound to its own scope). */
export type AssignmentsWithin = (scope: Node) => readonly Node[];

/** How deep one value's reading may nest; real code stays far below (tens). */
const MAX_NESTING = 400;


export class ValueHints {
  /** Scope node id → name → bindings in source order; a scope's are built when it is first asked about. */
  private readonly bindings = new Map<number, Map<string, Binding[]>>();
  private readonly bound = new Set<number>();
  /** Scopes whose whole text range has been bound (so every scope nested in them is complete too). */
  private readonly covered = new Set<number>();
  private readonly scopes = new ScopeCache();
  private readonly memo = new Map<number, ValueHint>();
  /** writtenInPlace answers by scope and name. */
  private readonly inPlace = new Map<string, boolean>();
  /** itemWrites answers by scope and name. */
  private readonly itemWrites = new Map<string, Node[] | undefined>();
  /** Per function (by node id): the names it declares `global`. */
  private readonly globals = new Map<number, Set<string>>();
  /** Does `node`'s value never require grad (ValueHint.gradFree), for grad-values.ts's questions? */
  readonly gradFreeOf = (node: Node): boolean => !!this.of(node).gradFree;
  /** How many of() calls are under way (see MAX_NESTING). */
  private depth = 0;

  /**
   * `assignmentsWithin` hands out a scope's assignments in document order when it is first asked
   * about: a file's analysis then reads only the functions whose values a rule needs.
   */
  constructor(
    readonly scope: ImportScope,
    private readonly assignmentsWithin: AssignmentsWithin,
  ) {}

  /** Set by the file's run: a fact read from another function of the file (call-site-args.ts) marks the hit uncacheable. */
  onReadBeyond?: () => void;

  readsBeyondFunction(): void {
    this.onReadBeyond?.();
  }

  /** Binds the assignments inside `scope`'s range (each to its own scope), once. */
  private cover(scope: Node): void {
    if (this.covered.has(scope.id)) return;
    this.covered.add(scope.id);
    for (const assignment of this.assignmentsWithin(scope)) {
      if (assignment.startIndex < scope.startIndex || assignment.startIndex >= scope.endIndex || this.bound.has(assignment.id)) continue;
      this.bound.add(assignment.id);
      this.bind(assignment);
    }
  }

  private bind(assignment: Node): void {
    const left = assignment.childForFieldName('left');
    if (!left) return;
    const right = assignment.childForFieldName('right') ?? undefined;
    const scopeId = this.scopes.of(assignment).id;
    let names = this.bindings.get(scopeId);
    if (!names) this.bindings.set(scopeId, (names = new Map()));
    const bind = (name: string, binding: Binding) => {
      const list = names!.get(name);
      if (list) list.push(binding);
      else names!.set(name, [binding]);
    };
    // `x[i] = v` and `obj.attr = v` bind no name; `x += v` binds x to the update itself.
    if (left.type === 'identifier') bind(left.text, { value: assignment.type === 'augmented_assignment' ? assignment : right, end: assignment.endIndex });
    else if (left.type === 'pattern_list' || left.type === 'tuple_pattern' || left.type === 'list_pattern') {
      // `a, b = x.flatten(), y.flatten()`: each name is bound to its own element.
      const elements = right && (right.type === 'expression_list' || right.type === 'tuple') ? right.namedChildren : undefined;
      if (elements && elements.length === left.namedChildCount && !elements.some((e) => e.type === 'list_splat')) {
        left.namedChildren.forEach((target, i) => {
          if (target.type === 'identifier') bind(target.text, { value: elements[i], end: assignment.endIndex });
        });
        return;
      }
      left.namedChildren.forEach((target, position) => {
        if (target.type === 'identifier') bind(target.text, { value: right, position, end: assignment.endIndex });
        else for (const id of target.descendantsOfType('identifier')) bind(id.text, { value: undefined, end: assignment.endIndex });
      });
    }
  }

  of(node: Node | undefined): ValueHint {
    if (!node) return UNKNOWN;
    const cached = this.memo.get(node.id);
    if (cached) return cached;
    this.memo.set(node.id, UNKNOWN); // cuts cycles such as x = x.float()
    // A value read through more than MAX_NESTING others (a 100,000-term sum, a chain of 10,000 calls)
    // is unknown: the recursion would overflow the stack and abort the file's analysis.
    if (this.depth >= MAX_NESTING) return UNKNOWN;
    this.depth++;
    let hint: ValueHint;
    try {
      hint = this.compute(unparenthesize(node));
    } finally {
      this.depth--;
    }
    this.memo.set(node.id, hint);
    return hint;
  }

  private compute(node: Node): ValueHint {
    switch (node.type) {
      case 'identifier': {
        const binding = this.definitionOf(node);
        // A module-level cache the function fills reads its module value, outside the function.
        if (!binding && globalGradFree(node, this.gradFreeOf, this.globals, () => this.readsBeyondFunction())) return { ...UNKNOWN, gradFree: true };
        // By the naming conventions where the code shows nothing better (no definition, or an unknown dtype).
        const hint = this.ofBinding(binding);
        const named = hint.dtype === 'unknown' && !hint.unique ? namedOffsets(node.text, !!binding) : undefined;
        if (named) return named;
        return hint.gradFree && writtenInPlace(node, node.text, this.inPlace) && !filledGradFree(node, this.gradFreeOf, this.itemWrites) ? { ...hint, gradFree: undefined } : hint;
      }
      case 'conditional_expression': {
        // `a if c else b`: what both branches share.
        const [a, , b] = node.namedChildren.map((c) => this.of(c));
        if (!a || !b) return UNKNOWN;
        return { dtype: a.dtype === b.dtype ? a.dtype : 'unknown', origin: a.origin === b.origin ? a.origin : 'unknown', unique: a.unique === b.unique ? a.unique : undefined, gradFree: (a.gradFree && b.gradFree) || undefined, cpu: (a.cpu && b.cpu) || undefined };
      }
      case 'integer':
        return { dtype: 'int', origin: 'unknown', gradFree: true };
      case 'comparison_operator':
        return { dtype: 'int', origin: 'unknown', gradFree: true };
      case 'float':
        return { dtype: 'float', origin: 'unknown', gradFree: true };
      case 'binary_operator':
      case 'augmented_assignment':
        return this.binary(node);
      case 'call':
        return callValue(node, this);
      case 'subscript':
        return this.subscript(node);
      case 'attribute':
        return this.attribute(node);
      default:
        return UNKNOWN;
    }
  }

  /** `perm[:k]`, `idx[mask]`: a selection of distinct entries stays distinct; `topk(...)[1]` is an index. */
  private subscript(node: Node): ValueHint {
    const value = node.childForFieldName('value');
    const base = this.of(value ?? undefined);
    const subscripts = node.childrenForFieldName('subscript');
    const coordinate = nonzeroCoordinate(this, this.scope, node);
    if (coordinate) return { dtype: 'int', origin: 'torch', unique: coordinate.rank === 1 ? 'flat' : undefined };
    // `order[:, 0]`: one column of per-row indices (each row's first pick) recurs across rows.
    if (base.unique === 'rows' && subscripts.slice(1).some((s) => s.type === 'integer' || s.type === 'unary_operator')) return { ...UNKNOWN, dtype: base.dtype, origin: base.origin };
    if (value?.type === 'call' && subscripts.length === 1 && subscripts[0]!.type === 'integer') {
      const fn = value.childForFieldName('function');
      const name = (fn && this.scope.resolveExpression(fn)) ?? (fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined) ?? '';
      if (VALUES_AND_INDICES.test(name) && subscripts[0]!.text === '1') return { dtype: 'int', origin: 'torch', unique: UNIQUE_INDICES.test(name) ? 'rows' : undefined };
    }
    const kept = { dtype: base.dtype, origin: base.origin, gradFree: base.gradFree, cpu: base.cpu };
    // `offsets[seq_ids]` with ids that repeat picks entries more than once.
    const repicked = subscripts.some((s) => s.type !== 'slice' && this.repeatsByConstruction(s));
    return base.unique && !repicked ? { ...kept, unique: base.unique, coordinates: base.coordinates } : kept;
  }

  /** `torch.sort(x).indices`, `x.topk(k).indices`; `self.x` as its class's `__init__` sets it. */
  private attribute(node: Node): ValueHint {
    const object = node.childForFieldName('object');
    const attribute = node.childForFieldName('attribute')?.text ?? '';
    if (object?.type === 'identifier' && object.text === 'self') {
      if (isBuffer(node)) return { ...UNKNOWN, gradFree: true };
      const value = this.selfAttributeValue(node);
      return value ? this.of(value) : (namedOffsets(attribute, false) ?? UNKNOWN);
    }
    const named = object?.type !== 'call' ? namedOffsets(attribute, false) : undefined;
    if (named) return named;
    if (attribute !== 'indices' || object?.type !== 'call') return UNKNOWN;
    const fn = object.childForFieldName('function');
    const name = (fn && this.scope.resolveExpression(fn)) ?? (fn?.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined) ?? '';
    return VALUES_AND_INDICES.test(name) ? { dtype: 'int', origin: 'torch', unique: UNIQUE_INDICES.test(name) ? 'rows' : undefined } : UNKNOWN;
  }

  /** The expression a name was last bound to before this use, and whether by unpacking. */
  definition(identifier: Node): { value: Node; unpacked: boolean } | undefined {
    const binding = this.definitionOf(identifier);
    return binding?.value ? { value: binding.value, unpacked: binding.position !== undefined } : undefined;
  }

  /**
   * Every value the name may hold at this use: the nearest binding and, when that one stands in a
   * branch of an `if` the use is outside of, the bindings of the same name in its other branches
   * (`if step > 0: p = 1 + overlap` / `else: p = torch.ones(n)`: either reaches the use).
   */
  definitions(identifier: Node): Node[] {
    const scope = this.scopes.of(identifier);
    this.cover(scope);
    const before = (this.bindings.get(scope.id)?.get(identifier.text) ?? []).filter((b) => b.end <= identifier.startIndex);
    const last = before.at(-1);
    if (!last?.value || last.position !== undefined) return last?.value ? [last.value] : [];
    let branching: Node | null = last.value.parent;
    while (branching && branching.type !== 'if_statement' && !isScopeNode(branching)) branching = branching.parent;
    if (branching?.type !== 'if_statement' || identifier.startIndex < branching.endIndex) return [last.value];
    const statement = branching;
    const inside = (b: Binding) => b.value!.startIndex >= statement.startIndex && b.value!.endIndex <= statement.endIndex;
    const reaching = before.filter((b) => b.value && b.position === undefined && inside(b));
    // Without an `else`, the value from before the `if` reaches the use too.
    const earlier = statement.childrenForFieldName('alternative').some((c) => c.type === 'else_clause') ? undefined : before.filter((b) => b.value && !inside(b)).at(-1);
    return [...(earlier ? [earlier] : []), ...reaching].map((b) => b.value!);
  }

  /**
   * For `a, b = f(x)` with `f` defined in this file (returns.ts): the expression `f` returns in the
   * place of this name.
   */
  unpackedFrom(identifier: Node): Node | undefined {
    const binding = this.definitionOf(identifier);
    if (binding?.position === undefined || binding.value?.type !== 'call') return undefined;
    const fn = calledFunction(binding.value, (n) => this.selfAttributeValue(n));
    if (fn) this.readsBeyondFunction();
    return fn && returnedElement(fn, binding.position);
  }

  /** The dimensions along which an index has size 1 (one index per row; index-facts.ts). */
  singletonDims(node: Node | undefined): number[] {
    return singletonDims(this, node, this.scope);
  }

  /** Is every element the same number (`ones_like(x)`, `full(n, 1.0)`; uniform-values.ts)? */
  uniform(node: Node | undefined): boolean {
    return isUniformFill(this, this.scope, node);
  }

  /** The rank, or else the least rank the op that made the tensor gives it (interpolate: 3; min-rank.ts). */
  leastRank(node: Node | undefined): number | undefined {
    return this.of(node).rank ?? leastRank(this, this.scope, node);
  }

  /** Does an index repeat by construction (index-facts.ts)? */
  repeatsByConstruction(node: Node | undefined, options: { modulo?: boolean } = {}): boolean {
    return repeatsByConstruction(this, this.scope, node, options);
  }

  /** A Python number by its form or its name's binding (`n = q.size(1)`, `n // m`; index-facts.ts `isNumber`). */
  isPythonNumber(node: Node | undefined | null): boolean {
    return isNumber(this, node ?? null);
  }

  /** The default value of the parameter `identifier` names in its function (`deterministic=False`), if any. */
  parameterDefault(identifier: Node): Node | undefined {
    if (identifier.type !== 'identifier' || this.definitionOf(identifier)) return undefined;
    return parameterDefault(enclosingFunction(identifier), identifier.text) ?? undefined;
  }

  /**
   * `self.x` read in a method: the value its class's `__init__` assigns to `self.x`, when it does so
   * once; a parameter of `__init__` is followed to its default (the value a plain construction gets).
   */
  selfAttributeValue(node: Node): Node | undefined {
    if (node.type !== 'attribute' || node.childForFieldName('object')?.text !== 'self') return undefined;
    const name = node.childForFieldName('attribute')?.text;
    const init = initOf(node);
    if (!init) return undefined;
    const writes = init.descendantsOfType('assignment').filter((a) => a.childForFieldName('left')?.text.replace(/\s/g, '') === `self.${name}`);
    const value = writes.length === 1 ? writes[0]!.childForFieldName('right') : null;
    if (!value) return undefined;
    return (value.type === 'identifier' && this.parameterDefault(value)) || value;
  }

  /** Is `node` known to be a torch tensor (not a Python number, list or NumPy array; tensor-evidence.ts)? */
  isTensor(node: Node | undefined | null): boolean {
    return isKnownTensor(this, this.scope, node);
  }

  private definitionOf(identifier: Node): Binding | undefined {
    const scope = this.scopes.of(identifier);
    this.cover(scope);
    const list = this.bindings.get(scope.id)?.get(identifier.text);
    if (!list) return undefined;
    let found: Binding | undefined;
    for (const binding of list) {
      if (binding.end > identifier.startIndex) break;
      found = binding;
    }
    return found;
  }

  private ofBinding(binding: Binding | undefined): ValueHint {
    if (!binding) return UNKNOWN;
    if (binding.position === undefined) return this.of(binding.value);
    // An element of an unpacked call result: a torch op's outputs are torch tensors.
    const source = binding.value?.type === 'call' ? binding.value : undefined;
    const fn = source?.childForFieldName('function');
    if (!source || !fn) return UNKNOWN;
    const qualified = this.scope.resolveExpression(fn);
    const method = qualified === undefined && fn.type === 'attribute' ? fn.childForFieldName('attribute')?.text : undefined;
    if (method !== undefined && this.of(fn.childForFieldName('object') ?? undefined).origin === 'numpy') return UNKNOWN;
    const name = qualified ?? method ?? '';
    if (uniqueCoordinate(this, this.scope, source, binding.position)) return { dtype: 'int', origin: 'torch', unique: 'flat' };
    const tupleOp = VALUES_AND_INDICES.test(name);
    if (!tupleOp && this.of(source).origin !== 'torch') return UNKNOWN;
    const indices = tupleOp && binding.position === 1;
    return { dtype: indices ? 'int' : 'unknown', origin: 'torch', unique: indices && UNIQUE_INDICES.test(name) ? 'rows' : undefined };
  }

  private binary(node: Node): ValueHint {
    const left = this.of(node.childForFieldName('left') ?? undefined);
    const right = this.of(node.childForFieldName('right') ?? undefined);
    // `x += y` (bound by bind()) is read as `x + y`.
    const op = node.childForFieldName('operator')?.text.replace(/^(\W+)=$/, '$1');
    if (op === '/') return { dtype: 'float', origin: left.origin };
    const dtype = left.dtype === 'float' || right.dtype === 'float' ? 'float' : left.dtype === 'int' && right.dtype === 'int' ? 'int' : 'unknown';
    const l = node.childForFieldName('left') ?? undefined;
    const r = node.childForFieldName('right') ?? undefined;
    const rowMajor = op === '+' && (isRowMajorIndex(this, l, r) || isRowMajorIndex(this, r, l));
    // An offset keeps distinct entries distinct (`idx + base`, `perm - 1`).
    const unique = rowMajor ? 'flat' : op === '+' || op === '-' ? (left.unique ?? right.unique) : undefined;
    const gradFree = (left.gradFree && right.gradFree) || undefined;
    return { dtype, origin: left.origin === 'unknown' ? right.origin : left.origin, rank: left.rank ?? right.rank, unique, gradFree };
  }
}
