// text → tree → facts (imports, guards, values) → rules → candidate hits. One walk over the tree
// collects every node any rule needs; rules are dispatched by canonical callee name.
import type { Node, Query, Tree } from 'web-tree-sitter';
import { runsWithoutGrad } from './autograd.js';
import { matmulOperatorCall, resolveCall } from './calls.js';
import { MODE_SWITCHES, ModeSetting, modeSettingOf } from './facts.js';
import { GuardFinder, isEarlyExit } from './guards.js';
import type { PythonParser } from './parse.js';
import type { AssignmentSite, Hit, Outcomes, Rule, RuleContext } from './rules/rule.js';
import { ChunkCache, ChunkResult, isMovable, shiftResult } from './chunk-cache.js';
import { Part, PartNodes, collectParts, fileParts, partAt } from './parts.js';
import { AliasAssignment, ImportScope, aliasAssignmentOf, importBindingsOf } from './scope.js';
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
  private activeRules(text: string): { byCallee: Map<string, Rule[]>; assignmentRules: Rule[]; fileRules: Rule[]; ids: string } {
    const present = new Set(text.match(this.allWords) ?? []);
    const has = (t: string) => (/^\w+$/.test(t) ? present.has(t) : text.includes(t));
    const byCallee = new Map<string, Rule[]>();
    const assignmentRules: Rule[] = [];
    const fileRules: Rule[] = [];
    const ids: string[] = [];
    for (const rule of this.rules) {
      if (!rule.triggers.some(has) || (rule.requires && !rule.requires.some((r) => text.includes(r)))) continue;
      ids.push(rule.id);
      for (const callee of rule.calls ?? []) {
        const list = byCallee.get(callee);
        if (list) list.push(rule);
        else byCallee.set(callee, [rule]);
      }
      if (rule.onAssignment) assignmentRules.push(rule);
      if (rule.onFile) fileRules.push(rule);
    }
    return { byCallee, assignmentRules, fileRules, ids: ids.join() };
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

  /**
   * Analyses a parsed file. With a `cache` (the language server's, one per document), functions whose
   * text and file context are unchanged since the last call are not analysed again; the findings are
   * the same either way (test/unit/incremental.test.ts).
   */
  analyzeTree(tree: Tree, text: string, options: AnalysisOptions, cache?: ChunkCache): FileAnalysis {
    const { byCallee, assignmentRules, fileRules, ids } = this.activeRules(text);
    const optional: Record<string, boolean> = {
      comment: text.includes('bitexact'),
      matmul: byCallee.has('operator.matmul'),
      augmented_assignment: assignmentRules.length > 0,
    };
    const wanted = COLLECTED.filter((type) => optional[type] ?? true);
    const query = this.collector(wanted);
    const root = tree.rootNode;
    const parts = fileParts(root);
    const keys = parts.map((p) => (p.chunk && cache ? `${p.container}:${p.node.startPosition.column}:${p.node.text}` : ''));
    const cached = keys.map((key) => (key ? cache!.get(key) : undefined));
    const nodes: Array<PartNodes | undefined> = new Array(parts.length);
    const collectWhere = (wantedParts: boolean[]) => collectParts(query, root, parts, wantedParts, nodes, wanted);
    collectWhere(cached.map((entry) => !entry));

    // Import resolution is file-wide (see scope.ts), so every part adds to it, cached ones from memory.
    const scope = new ImportScope();
    const scopeOps = parts.map((_, i) => (nodes[i] ? scopeOpsOf(nodes[i]!) : cached[i]!));
    for (const op of scopeOps) for (const binding of op.imports) scope.addImportBinding(binding);
    for (const op of scopeOps) for (const alias of op.aliases) scope.addAlias(alias);

    const firstChunk = parts.findIndex((p) => p.chunk);
    const firstChunkRow = firstChunk >= 0 ? parts[firstChunk]!.node.startPosition.row : Infinity;
    const signature = cache ? contextSignature(parts, firstChunk, [JSON.stringify(options), ids, wanted.join(), scope.state()]) : '';
    const valid = cached.map((entry) => entry?.analyses.find((a) => a.signature === signature));
    // Parts analysed afresh, and valid chunks where a rule that reads beyond its function must run again.
    collectWhere(parts.map((_, i) => !valid[i] || valid[i]!.nonLocal));

    let outsideAssignments: Node[] | undefined;
    const values = new ValueHints(scope, (node) => {
      const at = node.type === 'module' ? -1 : partAt(parts, node.startIndex);
      if (at >= 0 && parts[at]!.chunk) {
        collectWhere(parts.map((_, i) => i === at));
        return nodes[at]!.get('assignment')!;
      }
      // Module and class scopes: their statements are all outside parts, which are always collected.
      outsideAssignments ??= parts.flatMap((p, i) => (p.chunk ? [] : nodes[i]!.get('assignment')!));
      return outsideAssignments;
    });
    const guards = new GuardFinder(scope, options.guardNames);
    let current: Rule | undefined;
    let sink: { local: Candidate[]; other: Candidate[] } = { local: [], other: [] };
    const ctx: RuleContext = {
      text,
      scope,
      values,
      torchVersion: options.torchVersion,
      guardOf: (node) => guards.guardOf(node),
      runsWithoutGrad: (node) => runsWithoutGrad(node, scope),
      report: (hit: Hit) => (current!.locality === 'function' ? sink.local : sink.other).push(toCandidate(current!, hit, guards)),
    };
    const names = new Set([...byCallee.keys(), ...MODE_SWITCHES].map((callee) => callee.slice(callee.lastIndexOf('.') + 1)));
    for (const local of scope.namesBoundTo(names)) names.add(local);
    const wantedCallee = (callee: string) => byCallee.has(callee) || MODE_SWITCHES.has(callee);

    /** Runs the rules (all, or only those that read beyond their function) on one part's nodes. */
    const runPart = (found: PartNodes, onlyNonLocal: boolean, modeSettings: ModeSetting[]): boolean => {
      let nonLocal = false;
      const run = (rule: Rule, visit: () => void) => {
        if (rule.locality === 'function' && onlyNonLocal) return;
        if (rule.locality !== 'function') nonLocal = true;
        current = rule;
        visit();
      };
      const calls = found.get('call')!.flatMap((name) => (names.has(name.text) ? (callOfName(name) ?? []) : []));
      const operatorCalls = byCallee.has('operator.matmul') ? found.get('matmul')!.map(matmulOperatorCall) : [];
      for (const call of [...calls.map((node) => resolveCall(node, scope, wantedCallee)), ...operatorCalls]) {
        if (!call) continue;
        const setting = !onlyNonLocal && MODE_SWITCHES.has(call.callee) ? modeSettingOf(call) : undefined;
        if (setting) modeSettings.push(setting);
        // A method on a value known to be a NumPy or pandas object is never a tensor kernel.
        if (call.receiver && values.of(call.receiver).origin === 'numpy') continue;
        for (const rule of byCallee.get(call.callee) ?? []) run(rule, () => rule.onCall!(call, ctx));
      }
      if (assignmentRules.length > 0) {
        for (const node of [...found.get('assignment')!, ...(found.get('augmented_assignment') ?? [])]) {
          const site = assignmentSite(node, scope);
          if (site) for (const rule of assignmentRules) run(rule, () => rule.onAssignment!(site, ctx));
        }
      }
      return nonLocal;
    };

    const candidates: Candidate[] = [];
    const modeSettings: ModeSetting[] = [];
    const suppressions: Suppression[] = [];
    for (const [i, part] of parts.entries()) {
      const entry = valid[i];
      const startRow = part.node.startPosition.row;
      sink = { local: [], other: candidates };
      if (entry) {
        const moved = shiftResult(entry.result, entry.startRow, startRow);
        candidates.push(...moved.candidates);
        modeSettings.push(...moved.modeSettings);
        suppressions.push(...moved.suppressions);
        if (entry.nonLocal) runPart(nodes[i]!, true, []);
        continue;
      }
      const result: ChunkResult = { candidates: sink.local, modeSettings: [], suppressions: parseSuppressions(nodes[i]!.get('comment') ?? []) };
      const nonLocal = runPart(nodes[i]!, false, result.modeSettings);
      candidates.push(...result.candidates);
      modeSettings.push(...result.modeSettings);
      suppressions.push(...result.suppressions);
      if (part.chunk && cache && isMovable(result, { startRow, endRow: part.node.endPosition.row }, firstChunkRow)) {
        cache.add(keys[i]!, scopeOps[i]!, { signature, startRow, result, nonLocal });
      }
    }
    sink = { local: candidates, other: candidates };
    for (const rule of fileRules) {
      current = rule;
      rule.onFile!(root, ctx);
    }
    cache?.commit();
    return { candidates, modeSettings, suppressions, syntaxErrors: root.hasError ? syntaxErrorRanges(root) : [] };
  }
}

/** What a part adds to import resolution. */
function scopeOpsOf(found: PartNodes): { imports: Array<[string, string]>; aliases: AliasAssignment[] } {
  const imports = [...found.get('import_statement')!, ...found.get('import_from_statement')!].flatMap(importBindingsOf);
  const aliases = found.get('assignment')!.flatMap((node) => {
    const left = node.childForFieldName('left');
    const alias = left && aliasAssignmentOf(left, node.childForFieldName('right'));
    return alias ? [alias] : [];
  });
  return { imports, aliases };
}

/**
 * What a function's local hits can depend on besides its own text (see Rule.locality): the options,
 * the rules the text activates, import resolution (file-wide), and of the statements outside
 * functions only those that can guard a function — early exits before it (guards.ts) — and, with
 * their rows, those above the first function, where cached fixes may insert (an import). Values are
 * looked up only in the function's own scope (values.ts), so other module-level code does not count.
 */
function contextSignature(parts: readonly Part[], firstChunk: number, facts: string[]): string {
  const skeleton: string[] = [];
  for (const [i, p] of parts.entries()) {
    if (p.chunk) skeleton.push('\u0000');
    else if (firstChunk < 0 || i < firstChunk) skeleton.push(`${p.node.startPosition.row}:${p.node.text}`);
    else if (isEarlyExit(p.node)) skeleton.push(p.node.text);
  }
  return [...facts, ...skeleton].join('\u0001');
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
