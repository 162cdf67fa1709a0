// text → tree → facts (imports, guards, values) → rules → candidate hits. One walk over the tree
// collects every node any rule needs; rules are dispatched by canonical callee name.
import type { Node, Query, Tree } from 'web-tree-sitter';
import { runsWithoutGrad } from './autograd.js';
import { matmulOperatorCall, resolveCall } from './calls.js';
import { MODE_SWITCHES, ModeSetting, modeSettingOf } from './facts.js';
import { GuardFinder } from './guards.js';
import type { PythonParser } from './parse.js';
import type { AssignmentSite, Hit, Outcomes, Rule, RuleContext } from './rules/rule.js';
import { ImportScope } from './scope.js';
import { Suppression, parseSuppressions } from './suppressions.js';
import { rangeOf } from './syntax.js';
import type { Fix, GuardKind, Range } from './types.js';
import { ValueHints } from './values.js';
import type { TorchVersion } from './version.js';

export interface AnalysisOptions {
  torchVersion: TorchVersion;
  guardNames: readonly string[];
}

/** A rule hit before the program's mode, configuration and suppressions are applied. */
export interface Candidate {
  rule: Rule;
  range: Range;
  guard: GuardKind;
  /** The condition that puts the hit in a guarded branch. */
  guardCondition?: Range;
  outcomes: Outcomes;
  fixes: Fix[];
}

export interface FileAnalysis {
  candidates: Candidate[];
  modeSettings: ModeSetting[];
  suppressions: Suppression[];
  /** Ranges tree-sitter could not parse; findings elsewhere in the file are still reported. */
  syntaxErrors: Range[];
}

const COLLECTED = ['call', 'assignment', 'augmented_assignment', 'import_statement', 'import_from_statement', 'comment', 'matmul'];
/** Query pattern by capture name; `matmul` is the `@` operator, dispatched as `operator.matmul`. */
const PATTERN: Record<string, string> = Object.fromEntries(COLLECTED.map((type) => [type, `(${type}) @${type}`]));
PATTERN['matmul'] = '(binary_operator operator: "@") @matmul';
// Calls are captured by the name they call (`f` of `f(x)`, `m` of `x.m(y)`): most calls of a file call
// names no rule knows, and those are skipped without reading any more of their nodes.
PATTERN['call'] = '(call function: (identifier) @call) (call function: (attribute attribute: (identifier) @call))';
const EMPTY: FileAnalysis = { candidates: [], modeSettings: [], suppressions: [], syntaxErrors: [] };

export class Analyzer {
  /** Word triggers found anywhere: a rule whose triggers (and `requires`) are absent cannot match. */
  private readonly allWords: RegExp;
  /** Whole-word triggers in one regex (a `put` trigger must not fire on every `input`), plus the rest. */
  private readonly wordTriggers: RegExp;
  private readonly otherTriggers: string[];
  /**
   * Capture queries (one pass inside wasm, far cheaper than a JS walk), by which optional captures they
   * include: comments only matter in files with a suppression, `@` and `x[i] += v` only when a rule
   * wants them.
   */
  private readonly collectors = new Map<string, Query>();

  constructor(
    private readonly parser: PythonParser,
    readonly rules: readonly Rule[],
  ) {
    // Besides the rules' own: suppression comments and the mode switches, whose facts matter to the
    // whole program even in a file where no rule matches.
    const own = ['bitexact', 'deterministic', 'use_deterministic_algorithms', 'set_deterministic_debug_mode', 'enable_full_determinism'];
    const triggers = [...new Set([...own, ...rules.flatMap((r) => r.triggers)])];
    const words = triggers.filter((t) => /^\w+$/.test(t));
    this.wordTriggers = new RegExp(`\\b(?:${words.join('|')})\\b`);
    this.allWords = new RegExp(`\\b(?:${words.join('|')})\\b`, 'g');
    this.otherTriggers = triggers.filter((t) => !/^\w+$/.test(t));
  }

  private collector(types: string[]): Query {
    const key = types.join(',');
    let query = this.collectors.get(key);
    if (!query) this.collectors.set(key, (query = this.parser.query(types.map((t) => PATTERN[t]).join(' '))));
    return query;
  }

  /** The rules that can match this text, indexed for dispatch (one regex pass over the text). */
  private activeRules(text: string): { byCallee: Map<string, Rule[]>; assignmentRules: Rule[]; fileRules: Rule[] } {
    const present = new Set(text.match(this.allWords) ?? []);
    const has = (t: string) => (/^\w+$/.test(t) ? present.has(t) : text.includes(t));
    const byCallee = new Map<string, Rule[]>();
    const assignmentRules: Rule[] = [];
    const fileRules: Rule[] = [];
    for (const rule of this.rules) {
      if (!rule.triggers.some(has) || (rule.requires && !rule.requires.some((r) => text.includes(r)))) continue;
      for (const callee of rule.calls ?? []) {
        const list = byCallee.get(callee);
        if (list) list.push(rule);
        else byCallee.set(callee, [rule]);
      }
      if (rule.onAssignment) assignmentRules.push(rule);
      if (rule.onFile) fileRules.push(rule);
    }
    return { byCallee, assignmentRules, fileRules };
  }

  /** Could any rule match this text? Lets callers skip parsing files that mention none of the triggers. */
  mayMatch(text: string): boolean {
    return this.wordTriggers.test(text) || this.otherTriggers.some((t) => text.includes(t));
  }

  analyzeText(text: string, options: AnalysisOptions): FileAnalysis {
    if (!this.mayMatch(text)) return EMPTY;
    const tree = this.parser.parse(text);
    try {
      return this.analyzeTree(tree, text, options);
    } finally {
      tree.delete();
    }
  }

  analyzeTree(tree: Tree, text: string, options: AnalysisOptions): FileAnalysis {
    const { byCallee, assignmentRules, fileRules } = this.activeRules(text);
    const optional: Record<string, boolean> = {
      comment: text.includes('bitexact'),
      matmul: byCallee.has('operator.matmul'),
      augmented_assignment: assignmentRules.length > 0,
    };
    const wanted = COLLECTED.filter((type) => optional[type] ?? true);
    const nodes = collect(this.collector(wanted), tree);
    const scope = new ImportScope();
    for (const node of nodes.get('import_statement') ?? []) scope.addImport(node);
    for (const node of nodes.get('import_from_statement') ?? []) scope.addImport(node);
    const values = new ValueHints(scope);
    const assignments = nodes.get('assignment') ?? [];
    for (const node of assignments) {
      const left = node.childForFieldName('left');
      if (left) scope.addAssignment(left, node.childForFieldName('right'));
      values.addAssignment(node);
    }
    const guards = new GuardFinder(scope, options.guardNames);
    const candidates: Candidate[] = [];
    let current: Rule | undefined;
    const ctx: RuleContext = {
      text,
      scope,
      values,
      torchVersion: options.torchVersion,
      guardOf: (node) => guards.guardOf(node),
      runsWithoutGrad: (node) => runsWithoutGrad(node, scope),
      report: (hit: Hit) => candidates.push(toCandidate(current!, hit, guards)),
    };
    const modeSettings: ModeSetting[] = [];
    const wantedCallee = (callee: string) => byCallee.has(callee) || MODE_SWITCHES.has(callee);
    const names = new Set([...byCallee.keys(), ...MODE_SWITCHES].map((callee) => callee.slice(callee.lastIndexOf('.') + 1)));
    for (const local of scope.namesBoundTo(names)) names.add(local);
    const calls = (nodes.get('call') ?? []).flatMap((name) => (names.has(name.text) ? (callOfName(name) ?? []) : []));
    const operatorCalls = byCallee.has('operator.matmul') ? (nodes.get('matmul') ?? []).map(matmulOperatorCall) : [];
    for (const call of [...calls.map((node) => resolveCall(node, scope, wantedCallee)), ...operatorCalls]) {
      if (!call) continue;
      const setting = MODE_SWITCHES.has(call.callee) ? modeSettingOf(call) : undefined;
      if (setting) modeSettings.push(setting);
      // A method on a value known to be a NumPy or pandas object is never a tensor kernel.
      if (call.receiver && values.of(call.receiver).origin === 'numpy') continue;
      for (const rule of byCallee.get(call.callee) ?? []) {
        current = rule;
        rule.onCall!(call, ctx);
      }
    }
    if (assignmentRules.length > 0) {
      const sites = [...assignments, ...(nodes.get('augmented_assignment') ?? [])].map((n) => assignmentSite(n, scope));
      for (const site of sites) {
        if (!site) continue;
        for (const rule of assignmentRules) {
          current = rule;
          rule.onAssignment!(site, ctx);
        }
      }
    }
    for (const rule of fileRules) {
      current = rule;
      rule.onFile!(tree.rootNode, ctx);
    }
    return {
      candidates,
      modeSettings,
      suppressions: parseSuppressions(nodes.get('comment') ?? []),
      syntaxErrors: tree.rootNode.hasError ? syntaxErrorRanges(tree.rootNode) : [],
    };
  }
}

function toCandidate(rule: Rule, hit: Hit, guards: GuardFinder): Candidate {
  const range = hit.range ?? (hit.node ? rangeOf(hit.node) : undefined);
  if (!range) throw new Error(`${rule.id} reported a hit with neither node nor range`);
  const found = hit.node && !hit.guard ? guards.guardWithCondition(hit.node) : { kind: hit.guard ?? 'none' };
  return { rule, range, guard: found.kind, guardCondition: found.condition, outcomes: hit.outcomes, fixes: hit.fixes ?? [] };
}

/** The call whose callee ends in `name` (see PATTERN['call']). */
function callOfName(name: Node): Node | undefined {
  const parent = name.parent;
  const call = parent?.type === 'attribute' ? parent.parent : parent;
  return call?.type === 'call' ? call : undefined;
}

/** Every node of the collected types, grouped by type, in document order. */
function collect(query: Query, tree: Tree): Map<string, Node[]> {
  const found = new Map<string, Node[]>(COLLECTED.map((type) => [type, []]));
  for (const capture of query.captures(tree.rootNode)) found.get(capture.name)!.push(capture.node);
  return found;
}

function assignmentSite(node: Node, scope: ImportScope): AssignmentSite | undefined {
  const left = node.childForFieldName('left');
  const right = node.childForFieldName('right');
  if (!left || !right) return undefined;
  return { node, left, right, target: scope.resolveExpression(left) };
}

function syntaxErrorRanges(root: Node): Range[] {
  const ranges: Range[] = [];
  const visit = (node: Node) => {
    if (ranges.length >= 20) return;
    if (node.type === 'ERROR' || node.isMissing) ranges.push(rangeOf(node));
    else if (node.hasError) for (const child of node.children) visit(child);
  };
  visit(root);
  return ranges;
}
