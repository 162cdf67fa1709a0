// text → tree → facts (imports, guards, values) → rules → candidate hits. One walk over the tree
// collects every node any rule needs; rules are dispatched by canonical callee name.
import type { Node, Query, Tree } from 'web-tree-sitter';
import { ChunkCache, ChunkResult, isMovable, optionsKey, shiftResult } from './chunk-cache.js';
import { chunkKey, contextSignature, mergeResults } from './chunk-context.js';
import type { ModeSetting } from './facts.js';
import { ActiveRules, AnalysisOptions, FileRun, PartOutput, RuleError, scopeFrom, scopeOpsOf } from './file-run.js';
import { isEarlyExit } from './guards.js';
import type { PythonParser, TextChange } from './parse.js';
import { analyzeChunkEdit } from './chunk-edit.js';
import { NameUses, usesOf } from './no-grad-callers.js';
import { Checkpoint, LargeParts, PartNodes, bindingsOf, collectParts, fileParts, finish, partAt } from './parts.js';
import { CALL_NAME_PATTERN, CallEdge, callEdgesOf } from './program.js';
import type { LaunchSwitch, Outcomes, Rule } from './rules/rule.js';
import { launchSwitchValues, type SwitchValue } from './launch-switches.js';
import { functionSeedsTorch, type FunctionSeeding } from './seeding-functions.js';
import { compilesWholeModel } from './compiled-models.js';
import { fallbackStarts, importBindingsOf } from './binding-statements.js';
import { aliasTriggers } from './scope.js';
import { Suppression, parseSuppressions } from './suppressions.js';
import { rangeOf } from './syntax.js';
import type { Fix, GuardKind, Range } from './types.js';
import { COLLECTED, FLAT_PART_BYTES, PATTERN, WALKED } from './capture-patterns.js';
import { TriggerScanner, TriggersFound } from './triggers.js';

export type { AnalysisOptions };

/**
 * An analysis that stops at checkpoints (parts.ts Checkpoint): the language server yields to the
 * event loop at each and drops the rest when the document has moved on. What a dropped analysis
 * leaves in the chunk cache is only the results of parts it finished, each valid for its text and
 * context, so the next analysis takes them up (test/unit/interrupted.test.ts).
 */
export type AnalysisSteps = Generator<Checkpoint, FileAnalysis, void>;

/** A rule hit before the program's mode, configuration and suppressions are applied. */
export interface Candidate {
  rule: Rule;
  range: Range;
  guard: GuardKind;
  /** The condition that puts the hit in a guarded branch. */
  guardCondition?: Range;
  outcomes: Outcomes;
  fixes: Fix[];
  /**
   * The functions (classes, module-level instances) the hit stands in, innermost first
   * (no-grad-callers.ts callableChain). A backward-only rule's hit is dropped when every call of one
   * of them runs without gradients; any hit is capped at info when only test functions reach one.
   */
  functions?: string[];
  /**
   * A kernel switch the hit runs under (`if USE_SPLIT_K:`): `bitexact check` reads the kernel's
   * launches across the program (launch-switches.ts) and keeps the hit at most info when every
   * launch leaves the switch off by default.
   */
  launchSwitch?: LaunchSwitch;
  /**
   * For an unseeded-program hit: the imported functions its code calls (a training entry point's
   * `setup(args)`). `bitexact check` finds their definitions by name in the training-path files and
   * drops the hit when one of them seeds torch (seeding-functions.ts).
   */
  seededBy?: string[];
}

export interface FileAnalysis {
  candidates: Candidate[];
  modeSettings: ModeSetting[];
  suppressions: Suppression[];
  /** Ranges tree-sitter could not parse; findings elsewhere in the file are still reported. */
  syntaxErrors: Range[];
  /** Rules that threw (a bitexact bug): reported as errors; the other rules' findings still stand. */
  ruleErrors?: RuleError[];
  /**
   * The file's unconditional calls by name, for the program's reachability (program.ts). Absent from
   * an analysis of one edited function (chunk-edit.ts), where the last full analysis's calls still
   * hold until the full analysis that follows once typing pauses; from a file no rule can match; and
   * when the caller reads them later (AnalysisOptions.callEdges).
   */
  calls?: CallEdge[];
  /**
   * Set on an analysis of one edited function that no longer parses (chunk-edit.ts): its hits are
   * those of its last clean text, until the full analysis that follows once typing pauses.
   */
  provisional?: true;
}

const EMPTY: FileAnalysis = { candidates: [], modeSettings: [], suppressions: [], syntaxErrors: [] };

export class Analyzer {
  /**
   * Finds the triggers in a text: a rule whose triggers (and `requires`) are absent cannot match.
   * Whole-word triggers (a `put` trigger must not fire on every `input`), and substrings: non-word
   * triggers, `requires`, 'bitexact'.
   */
  private readonly triggers: TriggerScanner;
  private lastScan: { text: string; found: TriggersFound } | undefined;
  /**
   * Capture queries (one pass inside wasm, far cheaper than a JS walk), by which optional captures they
   * include: comments only matter in files with a suppression, `@` and `x[i] += v` only when a rule
   * wants them.
   */
  private readonly collectors = new Map<string, Query>();
  private callNames: Query | undefined;
  private imports: Query | undefined;

  constructor(
    readonly parser: PythonParser,
    readonly rules: readonly Rule[],
  ) {
    // Besides the rules' own: suppression comments and the mode switches, whose facts matter to the
    // whole program even in a file where no rule matches.
    // A bare entry point's calls, needed only when some switch is still unreached, are read lazily
    // (Checker.addCallsOfSkippedFiles), so `__main__` alone does not make a file worth analysing.
    const own = ['bitexact', 'deterministic', 'use_deterministic_algorithms', 'set_deterministic_debug_mode', 'enable_full_determinism'];
    const triggers = [...new Set([...own, ...rules.flatMap((r) => r.triggers)])];
    const words = triggers.filter((t) => /^\w+$/.test(t));
    const otherTriggers = triggers.filter((t) => !/^\w+$/.test(t));
    const substrings = [...new Set([...otherTriggers, ...rules.flatMap((r) => r.requires ?? []), 'bitexact'])];
    // A non-word trigger alone makes a file worth parsing; a `requires` alone does not.
    this.triggers = new TriggerScanner(words, substrings, substrings.map((t) => otherTriggers.includes(t)));
  }

  collector(types: string[]): Query {
    const key = types.join(',');
    let query = this.collectors.get(key);
    if (!query) this.collectors.set(key, (query = this.parser.query(types.map((t) => PATTERN[t]).join(' '))));
    return query;
  }

  /** How a part over FLAT_PART_BYTES is read (parts.ts LargeParts); undefined when no capture needs it. */
  private largeParts(types: string[]): LargeParts | undefined {
    const walked = types.filter((t) => WALKED[t]);
    if (walked.length === 0) return undefined;
    const queried = types.filter((t) => !WALKED[t]);
    return {
      minBytes: FLAT_PART_BYTES,
      query: queried.length ? this.collector(queried) : undefined,
      walked: new Map(walked.map((t) => [WALKED[t]!.type, { name: t, keep: WALKED[t]!.keep }])),
    };
  }

  /** The rules that can match this text, indexed for dispatch (one regex pass over the text). */
  activeRules(text: string): ActiveRules {
    const present = this.triggersPresent(text);
    const has = (t: string) => (/^\w+$/.test(t) ? present.words.has(t) : present.substrings.has(t));
    const byCallee = new Map<string, Rule[]>();
    const assignmentRules: Rule[] = [];
    const fileRules: Rule[] = [];
    const ids: string[] = [];
    for (const rule of this.rules) {
      if (!rule.triggers.some(has) || (rule.requires && !rule.requires.some((r) => present.substrings.has(r)))) continue;
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

  /**
   * The trigger words and substrings present in a text, as one string. Two texts with the same answer
   * can replace each other in a file without changing which rules are active.
   */
  triggersIn(text: string): string {
    const { words, substrings } = this.triggersPresent(text);
    return `${[...words].sort().join()}|${[...substrings].join()}`;
  }

  /** Whole-word triggers (matched as words: a `put` trigger must not fire on `input`) and substrings found in `text`. */
  private triggersPresent(text: string): TriggersFound {
    // analyzeText asks, then analysisSteps for the same text: read it once.
    if (this.lastScan?.text !== text) this.lastScan = { text, found: this.triggers.scan(text) };
    return this.lastScan.found;
  }

  /** Could any rule match this text? Lets callers skip parsing files that mention none of the triggers. */
  mayMatch(text: string): boolean {
    return this.triggers.mayMatch(text);
  }

  /** A file's unconditional calls (program.ts), for a file no rule matched. */
  callsOf(text: string): CallEdge[] {
    const tree = this.parser.parse(text);
    try {
      return this.callsOfTree(tree);
    } finally {
      tree.delete();
    }
  }

  /** The unconditional calls of a parsed file (program.ts). */
  callsOfTree(tree: Tree): CallEdge[] {
    this.callNames ??= this.parser.query(CALL_NAME_PATTERN);
    return callEdgesOf(tree.rootNode, this.callNames);
  }

  /** The uses of `names` in a file (no-grad-callers.ts), with the file's imports resolved. */
  usesOf(text: string, names: readonly string[]): Map<string, NameUses> {
    const tree = this.parser.parse(text);
    try {
      this.imports ??= this.parser.query('(import_statement) @import (import_from_statement) @import');
      const scope = scopeFrom([{ imports: this.imports.captures(tree.rootNode).flatMap((c) => importBindingsOf(c.node)), aliases: [] }]);
      return usesOf(tree.rootNode, names, scope);
    } finally {
      tree.delete();
    }
  }

  /** Does a file compile a whole model on its default path (compiled-models.ts)? */
  compilesWholeModel(text: string): boolean {
    const tree = this.parser.parse(text);
    try {
      return compilesWholeModel(tree.rootNode, text);
    } finally {
      tree.delete();
    }
  }

  /** Does the module-level function `name` of a file seed torch (seeding-functions.ts)? */
  functionSeedsTorch(text: string, name: string): FunctionSeeding {
    const tree = this.parser.parse(text);
    try {
      return functionSeedsTorch(tree.rootNode, name);
    } finally {
      tree.delete();
    }
  }

  /** What each launch of a kernel in a file passes for one of its switches (launch-switches.ts). */
  launchSwitchValues(text: string, launch: LaunchSwitch): SwitchValue[] {
    const tree = this.parser.parse(text);
    try {
      return launchSwitchValues(tree.rootNode, launch.kernel, launch.param);
    } finally {
      tree.delete();
    }
  }

  analyzeText(text: string, options: AnalysisOptions): FileAnalysis {
    if (!this.triggers.matches(this.triggersPresent(options.project ? text + aliasTriggers(options.project, text) : text))) return EMPTY;
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
    return finish(this.analysisSteps(tree, text, options, cache));
  }

  /** analyzeTree as steps: the same work in the same order, with checkpoints between. */
  *analysisSteps(tree: Tree, text: string, options: AnalysisOptions, cache?: ChunkCache): AnalysisSteps {
    // A project alias (`resize` for F.interpolate; project-aliases.ts) triggers the rules of what it stands for.
    const triggers = options.project ? text + aliasTriggers(options.project, text) : text;
    const active = this.activeRules(triggers);
    const wanted = this.wantedCaptures(triggers, active);
    const query = this.collector(wanted);
    const root = tree.rootNode;
    const parts = fileParts(root);
    const keys = parts.map((p) => (p.chunk && cache ? chunkKey(p.container, p.node.startPosition.column, p.node.text) : ''));
    const cached = keys.map((key) => (key ? cache!.get(key) : undefined));
    const nodes: Array<PartNodes | undefined> = new Array(parts.length);
    const flat = this.largeParts(wanted);
    const collectWhere = (wantedParts: boolean[]) => collectParts(query, root, parts, wantedParts, nodes, wanted, flat);
    yield* collectWhere(cached.map((entry) => !entry));

    // Import resolution is file-wide (see scope.ts), so every part adds to it, cached ones from memory.
    const hasError = root.hasError;
    const fallbacks = fallbackStarts(text, parts, hasError);
    const scopeOps = parts.map((_, i) => (nodes[i] ? scopeOpsOf(nodes[i]!, fallbacks[i]) : cached[i]!));
    const scope = scopeFrom(scopeOps, options.project);
    const firstChunk = parts.findIndex((p) => p.chunk);
    const firstChunkRow = firstChunk >= 0 ? parts[firstChunk]!.node.startPosition.row : Infinity;
    const signature = cache ? contextSignature(parts, firstChunk, [JSON.stringify(options), active.ids, wanted.join(), scope.state()]) : '';
    const valid = cached.map((entry) => entry?.analyses.find((a) => a.signature === signature));
    // Parts analysed afresh, and valid chunks where a rule that reads beyond its function must run again.
    yield* collectWhere(parts.map((_, i) => !valid[i] || valid[i]!.nonLocal));

    let outsideAssignments: Node[] | undefined;
    const run = new FileRun(active, scope, (node) => {
      const at = node.type === 'module' ? -1 : partAt(parts, node.startIndex);
      if (at >= 0 && parts[at]!.chunk) {
        finish(collectWhere(parts.map((_, i) => i === at)));
        return bindingsOf(nodes[at]!);
      }
      // Module and class scopes: their statements are all outside parts, which are always collected.
      outsideAssignments ??= parts.flatMap((p, i) => (p.chunk ? [] : nodes[i]!.get('assignment')!));
      return outsideAssignments;
    }, text, options);

    const other: Candidate[] = [];
    const results: ChunkResult[] = [];
    // Whether the next edit inside one function can be analysed from that function alone (chunk-edit.ts).
    let reusable = !!cache && active.fileRules.length === 0;
    for (const [i, part] of parts.entries()) {
      const entry = valid[i];
      const startRow = part.node.startPosition.row;
      let result: ChunkResult;
      if (entry) {
        result = shiftResult(entry.result, entry.startRow, startRow);
        if (entry.nonLocal) yield* run.runPartSteps(nodes[i]!, true, { local: [], other, modeSettings: [] });
        reusable &&= !entry.nonLocal;
      } else {
        result = { candidates: [], modeSettings: [], suppressions: parseSuppressions(nodes[i]!.get('comment') ?? []) };
        const output: PartOutput = { local: result.candidates, other, modeSettings: result.modeSettings };
        const nonLocal = yield* run.runPartSteps(nodes[i]!, false, output);
        // Only the language server keeps results (the CLI has no cache): only it needs to know. A
        // part whose hits read other functions (RuleContext.readsBeyondFunction) is analysed anew each time.
        const movable = !!cache && isMovable(result, { startRow, endRow: part.node.endPosition.row }, firstChunkRow);
        if (part.chunk && cache && movable && !output.readBeyond) cache.add(keys[i]!, scopeOps[i]!, { signature, startRow, result, nonLocal });
        reusable &&= movable && !nonLocal && !output.readBeyond && (part.chunk || !isEarlyExit(part.node));
      }
      results.push(result);
      if (!entry) yield 'part';
    }
    run.runFileRules(root, { local: other, other, modeSettings: [] });
    const syntaxErrors = hasError ? syntaxErrorRanges(root) : [];
    if (cache) {
      cache.commit();
      // A file that cannot be analysed by parts now (a keystroke broke its syntax) keeps the last
      // layout that could: the keystroke that repairs it is then an edit of that text (chunk-edit.ts
      // checks that everything outside the edited function is as that text had it).
      if (reusable && syntaxErrors.length === 0) {
        cache.layout = {
          text,
          options: optionsKey(options),
          signature,
          active,
          wanted,
          scope,
          firstChunkRow,
          parts: parts.map((p, i) => ({
            ...scopeOps[i]!,
            start: p.start,
            end: p.end,
            startRow: p.node.startPosition.row,
            startColumn: p.node.startPosition.column,
            endRow: p.node.endPosition.row,
            chunk: p.chunk,
            container: p.container,
            result: results[i]!,
          })),
        };
      }
    }
    const merged = mergeResults(results);
    const analysis: FileAnalysis = { ...merged, candidates: [...merged.candidates, ...other], syntaxErrors, ...(run.errors.length > 0 ? { ruleErrors: run.errors } : {}) };
    if (options.callEdges === false) return analysis;
    return { ...analysis, calls: this.callsOfTree(tree) };
  }

  /**
   * The analysis of `text` reached by `edits` from the last analyzeTree with this cache, when the edits
   * stay inside one function and it can be analysed alone (chunk-edit.ts); else undefined.
   */
  analyzeEdit(text: string, edits: readonly TextChange[], options: AnalysisOptions, cache: ChunkCache): FileAnalysis | undefined {
    return analyzeChunkEdit(this, text, edits, options, cache);
  }

  /** Which optional captures this text needs (see `collectors`). */
  wantedCaptures(text: string, active: ActiveRules): string[] {
    const optional: Record<string, boolean> = {
      comment: text.includes('bitexact'),
      matmul: active.byCallee.has('operator.matmul'),
      augmented_assignment: active.assignmentRules.length > 0,
    };
    return COLLECTED.filter((type) => optional[type] ?? true);
  }
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
