// Determinism guards: code that already chooses a deterministic path at run time
// (`if torch.are_deterministic_algorithms_enabled(): ... else: fast()`, `if config.deterministic_mode`,
// `if not det: return fast(x)`, `slow() if det else fast()`). The innermost guard around a node wins.
import type { Node } from 'web-tree-sitter';
import { parentOf } from './parents.js';
import type { ImportScope } from './scope.js';
import { callArguments, dottedParts, endsFlow, literalValue, rangeOf, unparenthesize } from './syntax.js';
import type { GuardKind, Range } from './types.js';

/** Flag names that mean "deterministic mode is on" wherever they appear (`cfg.x`, `self.x`, `x`). */
export const DEFAULT_GUARD_NAMES = [
  'deterministic', 'deterministic_mode', 'deterministic_algorithms', 'use_deterministic_algorithms',
  'use_deterministic', 'is_deterministic', 'det', 'det_mode', 'deterministic_training',
  'bitwise_deterministic', 'enable_determinism', 'determinism', 'bitexact',
];
const DEFAULT_NAMES = new Set(DEFAULT_GUARD_NAMES);

/** A word of a flag name that says "deterministic" (`DETERMINISTIC_REDUCTION`, `use_deterministic_kv`). */
const DETERMINISM_WORD = /(^|_)(deterministic|determinism|bitwise_deterministic|bit_exact|bitexact|reproducible)(_|$)/;
/** ...unless it says the opposite (`allow_nondeterministic`, `non_deterministic`). */
const OPPOSITE_WORD = /non_?determinis|nondet|allow_non/;

/**
 * Is `name` a determinism flag? Case-insensitive, leading underscores ignored: a built-in or extra
 * name exactly, or any name with a "deterministic" word (`_use_deterministic`,
 * `DETERMINISTIC_REDUCTION`, `self.deterministic_kv`) that does not say the opposite.
 */
export function isGuardName(name: string, extra: ReadonlySet<string> = new Set()): boolean {
  const plain = name.replace(/^_+/, '').toLowerCase();
  if (extra.has(plain) || DEFAULT_NAMES.has(plain)) return true;
  return DETERMINISM_WORD.test(plain) && !OPPOSITE_WORD.test(plain);
}

const GUARD_CALLS = new Set(['torch.are_deterministic_algorithms_enabled', 'torch.get_deterministic_debug_mode']);
const ENV_READERS = new Set(['os.environ.get', 'os.getenv']);
const TRUE_STRINGS = new Set(['1', 'true', 'True', 'TRUE', 'yes', 'on']);

/** What a condition says about each branch: the then-branch and the else-branch. */
interface Polarity {
  then: GuardKind | undefined;
  else: GuardKind | undefined;
}

const NEUTRAL: Polarity = { then: undefined, else: undefined };
const DET: Polarity = { then: 'deterministic-branch', else: 'default-branch' };

/** A guard and the condition that sets it (shown to users as related information). */
export interface Guard {
  kind: GuardKind;
  condition?: Range;
}

const UNGUARDED: Guard = { kind: 'none' };

/** What the statements before one statement of a block say: an early exit's guard, a local mode switch's. */
interface StatementGuards {
  earlyExit: Guard | undefined;
  localSwitch: Guard | undefined;
}

export class GuardFinder {
  private readonly names: Set<string>;
  private readonly memo = new Map<number, Guard>();
  /** Per block (by node id): the guards its earlier statements put on each statement. */
  private readonly blocks = new Map<number, Map<number, StatementGuards>>();

  /** `mentionsSwitch`: the text calls use_deterministic_algorithms somewhere (else no local switch can guard). */
  constructor(
    private readonly scope: ImportScope,
    extraNames: readonly string[] = [],
    private readonly mentionsSwitch = true,
  ) {
    this.names = new Set(extraNames.map((n) => n.toLowerCase()));
  }

  guardOf(node: Node): GuardKind {
    return this.guardWithCondition(node).kind;
  }

  guardWithCondition(node: Node): Guard {
    // Every node passed on the way up shares the answer, so remember it for all of them: the calls
    // of one function then cost one walk between them.
    const visited: Node[] = [];
    let result: Guard = UNGUARDED;
    let child = node;
    for (let parent = parentOf(node); parent; child = parent, parent = parentOf(parent)) {
      const cached = this.memo.get(child.id);
      if (cached !== undefined) {
        result = cached;
        break;
      }
      visited.push(child);
      const found = this.branchGuard(parent, child) ?? this.earlyExitGuard(parent, child) ?? this.localSwitchGuard(parent, child);
      if (found) {
        result = found;
        break;
      }
    }
    for (const n of visited) this.memo.set(n.id, result);
    return result;
  }

  /** The guard a branching parent puts on one of its children. */
  private branchGuard(parent: Node, child: Node): Guard | undefined {
    if (parent.type === 'if_statement' || parent.type === 'elif_clause') {
      const condition = parent.childForFieldName('condition');
      if (!condition || child.equals(condition)) return undefined;
      const polarity = this.polarity(condition);
      // The consequence takes the then-side; an elif_clause or else_clause of this if the else-side.
      const kind = child.equals(parent.childForFieldName('consequence') ?? condition) ? polarity.then : polarity.else;
      return kind && { kind, condition: rangeOf(condition) };
    }
    if (parent.type === 'conditional_expression') {
      // body if condition else alternative
      const [body, condition, alternative] = parent.namedChildren;
      if (!body || !condition || !alternative) return undefined;
      const polarity = this.polarity(condition);
      const kind = child.equals(body) ? polarity.then : child.equals(alternative) ? polarity.else : undefined;
      return kind && { kind, condition: rangeOf(condition) };
    }
    return undefined;
  }

  /**
   * The guards a block's earlier statements put on each of its statements, read in one pass over the
   * block and kept: asking per finding by walking back over the siblings made a file of n module-level
   * findings cost n² (issue 10 item 7).
   */
  private statementGuards(block: Node): Map<number, StatementGuards> {
    let guards = this.blocks.get(block.id);
    if (guards) return guards;
    guards = new Map();
    let earlyExit: Guard | undefined;
    let localSwitch: Guard | undefined;
    const switches = this.mentionsSwitch && block.type === 'block';
    for (const statement of block.namedChildren) {
      guards.set(statement.id, { earlyExit, localSwitch });
      const exit = this.earlyExitOf(statement);
      if (exit) earlyExit = exit;
      const switched = switches ? (this.switchOf(statement) ?? this.finallySwitchOf(statement)) : undefined;
      if (switched) localSwitch = switched.guard;
    }
    this.blocks.set(block.id, guards);
    return guards;
  }

  /**
   * A function that turns the mode on around its own work (`use_deterministic_algorithms(True)`
   * earlier in the same block, restored afterwards in a `finally`): what follows runs
   * deterministically, whatever the program's mode. A later switch off before `child` ends it.
   */
  private localSwitchGuard(block: Node, child: Node): Guard | undefined {
    if (!this.mentionsSwitch || block.type !== 'block') return undefined;
    return this.statementGuards(block).get(child.id)?.localSwitch;
  }

  /** A statement that switches the mode: `{ guard }` when it turns it on, `{ guard: undefined }` off. */
  private switchOf(statement: Node): { guard: Guard | undefined } | undefined {
    const call = statement.type === 'expression_statement' ? statement.namedChildren[0] : undefined;
    const fn = call?.type === 'call' ? call.childForFieldName('function') : undefined;
    if (!fn || this.scope.resolveExpression(fn) !== 'torch.use_deterministic_algorithms') return undefined;
    const args = callArguments(call!);
    const mode = literalValue(args.positional[0] ?? args.keywords.get('mode'));
    const warnOnly = literalValue(args.keywords.get('warn_only'));
    return { guard: mode === true && warnOnly !== true ? { kind: 'deterministic-branch', condition: rangeOf(call!) } : undefined };
  }

  /**
   * `try: ... finally: torch.use_deterministic_algorithms(saved)`: the mode after the try is what the
   * finally clause's last switch leaves (the mode-around fix restores the caller's mode this way).
   */
  private finallySwitchOf(statement: Node): { guard: Guard | undefined } | undefined {
    if (statement.type !== 'try_statement') return undefined;
    const body = statement.namedChildren.find((c) => c.type === 'finally_clause')?.namedChildren.find((c) => c.type === 'block');
    let last: { guard: Guard | undefined } | undefined;
    for (const inner of body?.namedChildren ?? []) last = this.switchOf(inner) ?? last;
    return last;
  }

  /** `if not det: return fast(x)` before `child` in the same block: the rest runs only when det. */
  private earlyExitGuard(block: Node, child: Node): Guard | undefined {
    if (block.type !== 'block' && block.type !== 'module') return undefined;
    return this.statementGuards(block).get(child.id)?.earlyExit;
  }

  /**
   * The guard an early exit puts on what follows it, if its condition says a mode; also one nested a
   * level down (`if ptr is not None:` / `if index is None or self._deterministic: return segment(x)`):
   * what follows the outer `if` is the path taken when the inner exit is not, the default side of the
   * flag (or, where the outer condition fails, a path the code has no deterministic choice for). Not
   * the deterministic side: where the outer condition fails, the default mode runs it too.
   */
  private earlyExitOf(statement: Node, nested = true): Guard | undefined {
    if (!isEarlyExit(statement)) {
      const body = statement.type === 'if_statement' && statement.childrenForFieldName('alternative').length === 0 ? statement.childForFieldName('consequence') : null;
      if (!nested || !body) return undefined;
      for (const inner of body.namedChildren) {
        // Only the default side: where the outer condition fails, the deterministic mode is not shown.
        const guard = this.earlyExitOf(inner, false);
        if (guard?.kind === 'default-branch') return guard;
      }
      return undefined;
    }
    const condition = statement.childForFieldName('condition');
    const polarity = condition ? this.polarity(condition) : NEUTRAL;
    return polarity.else && condition ? { kind: polarity.else, condition: rangeOf(condition) } : undefined;
  }

  private polarity(raw: Node): Polarity {
    const node = unparenthesize(raw);
    if (node.type === 'not_operator') return swap(this.polarity(node.childForFieldName('argument') ?? node));
    if (node.type === 'boolean_operator') {
      const left = this.polarity(node.childForFieldName('left') ?? node);
      const right = this.polarity(node.childForFieldName('right') ?? node);
      const op = node.childForFieldName('operator')?.text;
      // `a and b` is true only if both are; `a or b` is false only if both are.
      if (op === 'and') return { then: left.then ?? right.then, else: left.else === right.else ? left.else : undefined };
      return { then: left.then === right.then ? left.then : undefined, else: left.else ?? right.else };
    }
    if (node.type === 'comparison_operator') return this.comparison(node);
    return this.isGuardAtom(node) ? DET : NEUTRAL;
  }

  private comparison(node: Node): Polarity {
    const [left, right] = node.namedChildren;
    const operator = node.children.find((c) => !c.isNamed)?.text;
    if (!left || !right || node.namedChildCount !== 2) return NEUTRAL;
    const value = literalValue(right);
    const atom = this.polarity(left);
    if (atom === NEUTRAL) return NEUTRAL;
    const positive = value === true || (typeof value === 'string' && TRUE_STRINGS.has(value)) || value === 1 || value === 2;
    const negative = value === false || value === null || value === 0 || value === '0' || value === '' || value === 'default';
    let result: Polarity = NEUTRAL;
    if (positive) result = atom;
    else if (negative) result = swap(atom);
    if (operator === '!=' || operator === 'is not') result = swap(result);
    else if (operator !== '==' && operator !== 'is') return NEUTRAL;
    return result;
  }

  private isGuardAtom(node: Node): boolean {
    const parts = dottedParts(node);
    if (parts) {
      const qualified = this.scope.resolveExpression(node);
      if (qualified === 'torch.backends.cudnn.deterministic') return true;
      return isGuardName(parts[parts.length - 1]!, this.names);
    }
    if (node.type === 'call') {
      const fn = node.childForFieldName('function');
      const qualified = fn ? this.scope.resolveExpression(fn) : undefined;
      if (qualified && GUARD_CALLS.has(qualified)) return true;
      const first = callArguments(node).positional;
      if (qualified && ENV_READERS.has(qualified)) return isDeterminismEnvName(literalValue(first[0]));
      // getattr(args, "deterministic_mode", False)
      if (fn?.text === 'getattr') {
        const name = literalValue(first[1]);
        return typeof name === 'string' && isGuardName(name, this.names);
      }
      return false;
    }
    if (node.type === 'subscript') {
      const value = node.childForFieldName('value');
      const key = node.childForFieldName('subscript');
      return !!value && this.scope.resolveExpression(value) === 'os.environ' && isDeterminismEnvName(literalValue(key));
    }
    return false;
  }
}

function swap(p: Polarity): Polarity {
  return { then: p.else, else: p.then };
}

function isDeterminismEnvName(value: unknown): boolean {
  return typeof value === 'string' && /DETERMINISTIC/i.test(value) && !/NONDETERMINISTIC/i.test(value);
}

/** An `if` without else whose body leaves the block: what follows it runs only when it is false. */
export function isEarlyExit(node: Node): boolean {
  return node.type === 'if_statement' && node.childrenForFieldName('alternative').length === 0 && endsFlow(node.childForFieldName('consequence'));
}
