// One analysis of one file: the context rules see (import resolution, values, guards) and the
// dispatch of a part's calls and assignments to the rules that want them.
import type { Node } from 'web-tree-sitter';
import { runsWithoutGrad } from './autograd.js';
import { alternativeCalls, CallSite, matmulOperatorCall, resolveCall, resolveWrappedCall } from './calls.js';
import type { Candidate } from './engine.js';
import { Devices } from './devices.js';
import { MODE_SWITCHES, ModeSetting, modeSettingOf } from './facts.js';
import { callableChain } from './no-grad-callers.js';
import { GuardFinder } from './guards.js';
import { parentOf } from './parents.js';
import { Checkpoint, PartNodes, finish } from './parts.js';
import type { AssignmentSite, Hit, Rule, RuleContext } from './rules/rule.js';
import { AliasAssignment, aliasAssignmentOf, importBindingsOf } from './binding-statements.js';
import { ImportScope, ProjectContext } from './scope.js';
import { rangeOf } from './syntax.js';
import { AssignmentsWithin, ValueHints } from './values.js';
import type { TorchVersion } from './version.js';

/** Calls of one part dispatched between two checkpoints. */
const CALLS_PER_SLICE = 64;

export interface AnalysisOptions {
  torchVersion: TorchVersion;
  guardNames: readonly string[];
  /**
   * false: leave FileAnalysis.calls out (bitexact check reads them afterwards, only from the files a
   * still unreached mode switch needs; Checker.checkProgram).
   */
  callEdges?: boolean;
  /** The project's own names for torch functions and the file's module (scope.ts ProjectContext). */
  project?: ProjectContext;
}

/** The rules a file's text can trigger, indexed for dispatch. */
export interface ActiveRules {
  byCallee: Map<string, Rule[]>;
  assignmentRules: Rule[];
  fileRules: Rule[];
  /** Their ids, joined: part of the context cached results depend on. */
  ids: string;
}

/** Where a part's hits go: those of function-local rules (cacheable) and the others. */
export interface PartOutput {
  local: Candidate[];
  other: Candidate[];
  modeSettings: ModeSetting[];
  /** A rule's facts came from another function of the file: the part's result must not be cached. */
  readBeyond?: boolean;
}

/** A rule that threw on one call or assignment: the rest of the file, and the other rules, still run. */
export interface RuleError {
  rule: string;
  /** 0-based line of the node the rule was looking at (the file's first line for a whole-file rule). */
  line: number;
  message: string;
}

export class FileRun {
  readonly ctx: RuleContext;
  private readonly guards: GuardFinder;
  private readonly values: ValueHints;
  /** Last names of the callees rules want, and local names bound to them (`sa` for `scatter_add as sa`). */
  private readonly names: Set<string>;
  private current: Rule | undefined;
  private output: PartOutput | undefined;
  /** Rules that threw in this file, in the order they did (a bug in bitexact, reported, never fatal). */
  readonly errors: RuleError[] = [];

  constructor(
    private readonly rules: ActiveRules,
    private readonly scope: ImportScope,
    assignmentsWithin: AssignmentsWithin,
    text: string,
    options: AnalysisOptions,
  ) {
    this.values = new ValueHints(scope, assignmentsWithin);
    this.values.onReadBeyond = () => {
      if (this.output) this.output.readBeyond = true;
    };
    this.guards = new GuardFinder(scope, options.guardNames, text.includes('use_deterministic_algorithms'));
    const guards = this.guards;
    let devices: Devices | undefined;
    this.ctx = {
      text,
      scope,
      values: this.values,
      torchVersion: options.torchVersion,
      guardOf: (node) => guards.guardOf(node),
      runsWithoutGrad: (node) => runsWithoutGrad(node, scope),
      isCpu: (node) => (devices ??= new Devices(scope, this.values, text)).isCpu(node),
      isConstant: (node) => (devices ??= new Devices(scope, this.values, text)).isConstant(node),
      report: (hit: Hit) => {
        const rule = this.current!;
        (rule.locality === 'function' ? this.output!.local : this.output!.other).push(toCandidate(rule, hit, guards));
      },
      readsBeyondFunction: () => {
        this.output!.readBeyond = true;
      },
    };
    this.names = new Set([...rules.byCallee.keys(), ...MODE_SWITCHES].map((callee) => callee.slice(callee.lastIndexOf('.') + 1)));
    for (const local of scope.namesBoundTo(this.names)) this.names.add(local);
    // `ops.resize(x)` where the project's `ops.resize` is F.interpolate: its last segment is a call name too.
    for (const name of scope.projectNamesFor(this.names)) this.names.add(name);
  }

  /**
   * Runs the rules (all, or only those that read beyond their function) on one part's nodes.
   * Returns whether a rule that reads beyond its function ran.
   */
  runPart(found: PartNodes, onlyNonLocal: boolean, output: PartOutput): boolean {
    return finish(this.runPartSteps(found, onlyNonLocal, output));
  }

  /** runPart, with a checkpoint every CALLS_PER_SLICE calls (one function can hold thousands). */
  *runPartSteps(found: PartNodes, onlyNonLocal: boolean, output: PartOutput): Generator<Checkpoint, boolean, void> {
    const { byCallee, assignmentRules } = this.rules;
    this.output = output;
    let nonLocal = false;
    const run = (rule: Rule, visit: () => void) => {
      if (rule.locality === 'function' && onlyNonLocal) return;
      if (rule.locality !== 'function') nonLocal = true;
      this.current = rule;
      this.guarded(rule, line, output, visit);
    };
    let line = 0;
    const wantedCallee = (callee: string) => byCallee.has(callee) || MODE_SWITCHES.has(callee);
    const calls: Array<CallSite | undefined> = [];
    for (const name of found.get('call')!) {
      if (!this.names.has(name.text)) continue;
      const node = callOfName(name);
      if (node) calls.push(resolveCall(node, this.scope, wantedCallee), ...alternativeCalls(node, this.scope, wantedCallee));
      else calls.push(resolveWrappedCall(name, this.scope, wantedCallee));
    }
    // A rule runs once on a call, whichever of its alternative callees lists it.
    const ran = new Map<number, Set<Rule>>();
    if (byCallee.has('operator.matmul')) calls.push(...found.get('matmul')!.map(matmulOperatorCall));
    for (const [k, call] of calls.entries()) {
      if (k % CALLS_PER_SLICE === CALLS_PER_SLICE - 1) yield 'slice';
      if (!call) continue;
      const setting = !onlyNonLocal && MODE_SWITCHES.has(call.callee) ? modeSettingOf(call) : undefined;
      if (setting) output.modeSettings.push(setting);
      // A method on a value known to be a NumPy or pandas object is never a tensor kernel.
      if (call.receiver && this.values.of(call.receiver).origin === 'numpy') continue;
      line = call.node.startPosition.row;
      let done = ran.get(call.node.id);
      if (!done) ran.set(call.node.id, (done = new Set()));
      for (const rule of byCallee.get(call.callee) ?? []) {
        if (done.has(rule)) continue;
        done.add(rule);
        run(rule, () => rule.onCall!(call, this.ctx));
      }
    }
    if (assignmentRules.length > 0) {
      for (const node of [...found.get('assignment')!, ...(found.get('augmented_assignment') ?? [])]) {
        const site = assignmentSite(node, this.scope);
        line = node.startPosition.row;
        if (site) for (const rule of assignmentRules) run(rule, () => rule.onAssignment!(site, this.ctx));
      }
    }
    return nonLocal;
  }

  /** Rules that read the whole tree. */
  runFileRules(root: Node, output: PartOutput): void {
    this.output = output;
    for (const rule of this.rules.fileRules) {
      this.current = rule;
      this.guarded(rule, 0, output, () => rule.onFile!(root, this.ctx));
    }
  }

  /**
   * Runs one rule's visit; an exception is kept as a RuleError, and the part is not cached, so the
   * error is reported again on the next analysis instead of vanishing with a cached result.
   */
  private guarded(rule: Rule, line: number, output: PartOutput, visit: () => void): void {
    try {
      visit();
    } catch (error) {
      output.readBeyond = true;
      this.errors.push({ rule: rule.id, line, message: error instanceof Error ? error.message : String(error) });
    }
  }
}

/** What a part adds to import resolution. */
export interface ScopeOps {
  imports: Array<[string, string]>;
  aliases: AliasAssignment[];
}

/** `fallbackFrom`: where the part's assignments may start to stand in an import fallback (binding-statements.ts fallbackStarts). */
export function scopeOpsOf(found: PartNodes, fallbackFrom = 0): ScopeOps {
  const imports = [...found.get('import_statement')!, ...found.get('import_from_statement')!].flatMap(importBindingsOf);
  const aliases = found.get('assignment')!.flatMap((node) => {
    const left = node.childForFieldName('left');
    const alias = left && aliasAssignmentOf(left, node.childForFieldName('right'), left.startIndex >= fallbackFrom);
    return alias ? [alias] : [];
  });
  return { imports, aliases };
}

/** Import resolution from every part's operations, imports first (scope.ts reads aliases through them). */
export function scopeFrom(ops: readonly ScopeOps[], project?: ProjectContext): ImportScope {
  const scope = new ImportScope(project);
  for (const op of ops) for (const binding of op.imports) scope.addImportBinding(binding);
  for (const op of ops) for (const alias of op.aliases) scope.addAlias(alias);
  return scope;
}

function toCandidate(rule: Rule, hit: Hit, guards: GuardFinder): Candidate {
  const range = hit.range ?? (hit.node ? rangeOf(hit.node) : undefined);
  if (!range) throw new Error(`${rule.id} reported a hit with neither node nor range`);
  const found = hit.node && !hit.guard ? guards.guardWithCondition(hit.node) : { kind: hit.guard ?? 'none' };
  const candidate: Candidate = { rule, range, guard: found.kind, guardCondition: found.condition, outcomes: hit.outcomes, fixes: hit.fixes ?? [] };
  // Every rule's: backward-only hits are dropped where no call has a backward, any hit is capped where only tests reach it.
  const functions = hit.node ? callableChain(hit.node, true) : [];
  if (functions.length) candidate.functions = functions;
  if (hit.launchSwitch) candidate.launchSwitch = hit.launchSwitch;
  if (hit.seededBy?.length) candidate.seededBy = hit.seededBy;
  return candidate;
}

/** The call whose callee ends in `name` (see engine.ts PATTERN['call']). */
function callOfName(name: Node): Node | undefined {
  const parent = parentOf(name);
  const call = parent?.type === 'attribute' ? parentOf(parent) : parent;
  return call?.type === 'call' ? call : undefined;
}

function assignmentSite(node: Node, scope: ImportScope): AssignmentSite | undefined {
  const left = node.childForFieldName('left');
  const right = node.childForFieldName('right');
  if (!left || !right) return undefined;
  return { node, left, right, target: scope.resolveExpression(left) };
}
