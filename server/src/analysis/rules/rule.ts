// The shape of a rule. One rule is one file under rules/<family>/ that exports a `Rule`;
// rules/index.ts lists them. Op rules are built with defineOpRule (op-rule.ts).
import type { Node } from 'web-tree-sitter';
import type { CallSite } from '../calls.js';
import type { ImportScope } from '../scope.js';
import type { DeterministicMode, Fix, GuardKind, Range, Severity } from '../types.js';
import type { ValueHints } from '../values.js';
import type { TorchVersion } from '../version.js';

export type RuleFamily = 'meta' | 'torch-op' | 'config' | 'rng-data' | 'custom-kernel' | 'attention' | 'distributed';

/** A versioned fact a rule relies on, shown in its doc page. */
export interface RuleFact {
  /** Torch versions the fact holds for, e.g. '>=2.11' ('' = all). */
  torch: string;
  /** 'measured': ../ground-truth on an H200; 'docs': PyTorch's docstring or docs for that version. */
  source: 'measured' | 'docs';
  text: string;
  /** For measured facts: the ground-truth case ('op | variant') the text is taken from. */
  case?: string;
  /** Machine-checkable form of a measured op fact; test/rules.meta.test.ts checks it against the case. */
  claims?: { variesByDefault: boolean; underMode: 'deterministic' | 'raises' | 'varies'; slowdown?: number };
}

/** What one hit means when deterministic mode is off, on, or warn-only. Absent: no finding. */
export interface ModeOutcome {
  severity: Severity;
  /** One sentence of at most 100 characters, no final period: what the hit is and why it varies. */
  message: string;
  /**
   * Markdown: what the message leaves out (the deterministic alternative, the measured cost, the
   * versions, the mode). Shown in the hover and in JSON/SARIF; it never repeats the message.
   */
  detail?: string;
  /** Fixes that only make sense in this mode; added to the hit's own fixes. */
  fixes?: Fix[];
  /**
   * What the hit means instead when another file of the program trains (program.ts programTrains):
   * a backward-only hazard in a model file that shows no training of its own.
   */
  whenProgramTrains?: { severity: Severity; message: string; detail?: string };
  /**
   * What the hit means instead when no file of the program seeds torch (program.ts
   * programUnseeded; known in `bitexact check`, which reads every file): a draw from torch's global
   * generator then differs on every run.
   */
  whenProgramUnseeded?: { severity: Severity; message: string; detail?: string };
  /** The hit holds only when no file of the program seeds torch (a seed may live in another file). */
  onlyWhenProgramUnseeded?: boolean;
  /**
   * The hit holds only when a whole-model compile of the program builds the file's top-level class
   * or function named here ('' for module-level code; program.ts ProgramFile.compiled).
   */
  onlyWhenCompiled?: string;
}

export type Outcomes = Partial<Record<DeterministicMode, ModeOutcome>>;

/** The longest a message may be (issue 15): what an editor's problem list shows before cutting it. */
export const MAX_MESSAGE = 100;

/**
 * The first of `forms` (most to least informative) that fits MAX_MESSAGE: a message built around
 * names taken from the code (a long alias, a long variant label) falls back to a shorter form.
 */
export function fitMessage(...forms: string[]): string {
  return forms.find((m) => m.length <= MAX_MESSAGE) ?? forms[forms.length - 1]!;
}

/** The same outcome whatever the mode (configuration rules). */
export function always(severity: Severity, message: string, detail?: string): Outcomes {
  const outcome: ModeOutcome = detail ? { severity, message, detail } : { severity, message };
  return { off: outcome, on: outcome, warn: outcome };
}

export interface Hit {
  node?: Node;
  range?: Range;
  outcomes: Outcomes;
  fixes?: Fix[];
  /** Guard override; by default the guard around `node` is used. */
  guard?: GuardKind;
  /** The hit runs only when a launch turns this constexpr switch of its kernel on (engine.ts Candidate). */
  launchSwitch?: LaunchSwitch;
  /** Functions of other files the hit's code calls, any of which may seed torch (engine.ts Candidate). */
  seededBy?: string[];
}

/** `if USE_SPLIT_K:` in the Triton kernel `kernel`: the hit's code runs only when a launch passes it on. */
export interface LaunchSwitch {
  kernel: string;
  param: string;
}

export interface RuleContext {
  readonly text: string;
  readonly scope: ImportScope;
  readonly values: ValueHints;
  readonly torchVersion: TorchVersion;
  guardOf(node: Node): GuardKind;
  runsWithoutGrad(node: Node): boolean;
  /** A torch tensor known to be on the CPU by how its function made it (devices.ts). */
  isCpu(node: Node | undefined): boolean;
  /** A tensor made in the function from constants, which no gradient reaches (devices.ts). */
  isConstant(node: Node | undefined): boolean;
  report(hit: Hit): void;
  /**
   * The current hit's facts came from another function of the file (defaults.ts): the part is not
   * cached per function by the language server, whose cached functions are not re-read when another changes.
   */
  readsBeyondFunction(): void;
}

export interface AssignmentSite {
  node: Node;
  /** Canonical dotted name of the target (`torch.backends.cudnn.benchmark`), if it resolves. */
  target?: string;
  left: Node;
  right: Node;
}

export interface Rule {
  id: string;
  name: string;
  family: RuleFamily;
  /** Typical severity of a hit (SARIF default level, docs). */
  defaultSeverity: Severity;
  /** One line: what the rule finds. */
  summary: string;
  /** Markdown body of `bitexact rule ID`: why, the deterministic alternative, its cost, examples. */
  docs: string;
  facts: readonly RuleFact[];
  /** Words (or substrings) of which at least one must occur in a file for the rule to match anything. */
  triggers: readonly string[];
  /** Substrings of which at least one must also occur (e.g. 'sparse' for sparse-operand rules). */
  requires?: readonly string[];
  /**
   * 'function': a hit depends only on the outermost function holding the call (with the file's
   * imports, aliases and module-level code), never on other functions, the whole text or the whole
   * tree; the language server then keeps the hits while other functions are edited. Rules that look
   * further leave it out and run on every analysis.
   */
  locality?: 'function';
  /**
   * The hazard is in the backward pass only: hits are silent where no gradient is recorded, at the
   * call (RuleContext.runsWithoutGrad) and in functions every call of which runs without gradients
   * (no-grad-callers.ts, across the program).
   */
  backwardOnly?: boolean;
  /** Canonical callees this rule inspects (see CallSite.callee). */
  calls?: readonly string[];
  onCall?(call: CallSite, ctx: RuleContext): void;
  onAssignment?(site: AssignmentSite, ctx: RuleContext): void;
  /** Runs once per file (when the rule's triggers occur) for rules that read the whole tree. */
  onFile?(root: Node, ctx: RuleContext): void;
}
