// The analysis core's public face, shared by the CLI and the language server so both report the
// same findings for the same text and settings.
import type { ChunkCache } from './chunk-cache.js';
import type { Settings } from './config.js';
import { Analyzer, AnalysisSteps, FileAnalysis } from './engine.js';
import type { ModeSetting } from './facts.js';
import { FileUses, NameUses, reachedOnlyFromTests, runsOnlyWithoutGrad } from './no-grad-callers.js';
import { showsTraining } from './autograd.js';
import { CallEdge, ProgramFile, ProgramView, programMode, programModeFor, programTrains, programUnseeded, reachedSwitches, runsOnItsOwn, showsSeeding } from './program.js';
import type { Tree } from 'web-tree-sitter';
import { GrammarFiles, PythonParser, TextChange } from './parse.js';
import { finish } from './parts.js';
import { importsAlias, projectAliases } from './project-aliases.js';
import type { CompiledAtomic } from './compiled-extensions.js';
import { ResolveMemo, resolveFindings } from './resolve.js';
import type { FunctionSeeding } from './seeding-functions.js';
import { RULES } from './rules/index.js';
import type { LaunchSwitch, ModeOutcome, Outcomes, Rule } from './rules/rule.js';
import type { DeterministicMode, Finding } from './types.js';

export interface SourceFile {
  path: string;
  text: string;
  settings: Settings;
  /** A test, benchmark, docs or build file (roles.ts). */
  offPath: boolean;
  /** Its Python module from the project root (`pkg.layers.wrappers`; module-names.ts), if it has one. */
  module?: string;
  /** It is a package's `__init__.py`. */
  isPackage?: boolean;
}

/** A file with the project it belongs to, for checkPrograms. */
export interface ProgramSource extends SourceFile {
  /** The project root (workspace/projects.ts): the files of one root form one program. */
  root: string;
  /** A notebook (its code cells joined, notebook.ts): a program of its own. */
  isNotebook?: boolean;
}

export interface CheckedFile {
  path: string;
  findings: Finding[];
  syntaxErrors: FileAnalysis['syntaxErrors'];
  /** Rules that threw on this file (a bug in bitexact): shown as errors, never silently dropped. */
  ruleErrors?: FileAnalysis['ruleErrors'];
}

export class Checker {
  readonly rules: ReadonlyMap<string, Rule>;

  private constructor(
    readonly parser: PythonParser,
    private readonly analyzer: Analyzer,
  ) {
    this.rules = new Map(analyzer.rules.map((r) => [r.id, r]));
  }

  static async create(grammar: GrammarFiles, rules: readonly Rule[] = RULES): Promise<Checker> {
    const parser = await PythonParser.create(grammar);
    return new Checker(parser, new Analyzer(parser, rules));
  }

  /** False when no rule can match the text (the file need not even be parsed). */
  mayMatch(text: string): boolean {
    return this.analyzer.mayMatch(text);
  }

  analyze(text: string, settings: Pick<Settings, 'torchVersion' | 'guardNames'>): FileAnalysis {
    return this.analyzer.analyzeText(text, { torchVersion: settings.torchVersion, guardNames: settings.guardNames });
  }

  /**
   * With a `cache` kept per document, functions unchanged since the last call are not analysed again.
   * `callEdges: false` leaves out the file's calls (callsOfTree reads them when they matter).
   */
  analyzeTree(tree: Tree, text: string, settings: Settings, cache?: ChunkCache, callEdges = true): FileAnalysis {
    return finish(this.analysisSteps(tree, text, settings, cache, callEdges));
  }

  /** analyzeTree in steps, for a caller that may stop it between two (engine.ts AnalysisSteps). */
  analysisSteps(tree: Tree, text: string, settings: Settings, cache?: ChunkCache, callEdges = true): AnalysisSteps {
    return this.analyzer.analysisSteps(tree, text, { torchVersion: settings.torchVersion, guardNames: settings.guardNames, ...(callEdges ? {} : { callEdges }) }, cache);
  }

  /** The unconditional calls of a parsed file (program.ts). */
  callsOfTree(tree: Tree): CallEdge[] {
    return this.analyzer.callsOfTree(tree);
  }

  /**
   * The analysis after `edits` (since the last analyzeTree with `cache`) when they stay inside one
   * function that can be analysed alone, without parsing the file; else undefined.
   */
  analyzeEdit(text: string, edits: readonly TextChange[], settings: Settings, cache: ChunkCache): FileAnalysis | undefined {
    return this.analyzer.analyzeEdit(text, edits, { torchVersion: settings.torchVersion, guardNames: settings.guardNames }, cache);
  }

  /** The per-file half of checkProgram: what a worker thread computes for one file. */
  analyzeForProgram(text: string, settings: Pick<Settings, 'torchVersion' | 'guardNames'>): FileAnalysis {
    return this.analyzer.analyzeText(text, { torchVersion: settings.torchVersion, guardNames: settings.guardNames, callEdges: false });
  }

  /** With a `memo` kept per document, unchanged candidates give the same Finding objects as last time. */
  resolve(analysis: FileAnalysis, text: string, settings: Settings, program: ProgramView, offPath: boolean, memo?: ResolveMemo): Finding[] {
    return resolveFindings(analysis, text, { settings, mode: effectiveMode(settings, program.mode), programTrains: program.trains, programUnseeded: program.unseeded === true, rules: this.rules, offPath }, memo);
  }

  /**
   * Call edges are read only where reachability needs them: when a mode switch inside a function is
   * not yet reached, the files naming that function (and then the functions calling it, and so on)
   * are parsed for their calls. Most programs have no such switch, and pay nothing.
   */
  private addCallEdges(program: ProgramFile[], files: readonly SourceFile[]): void {
    const done = new Set<number>();
    const names = new Set<string>();
    for (let round = 0; round < 6; round++) {
      const reached = new Set(reachedSwitches(program));
      const pending = program.flatMap((f) => (f.offPath ? [] : f.modeSettings.filter((s) => !s.conditional && !reached.has(s) && s.function)));
      if (pending.length === 0) return;
      for (const s of pending) names.add(s.function!);
      const pattern = new RegExp(`\\b(?:${[...names].map((n) => n.replace(/\W/g, '')).join('|')})\\s*\\(`);
      let added = false;
      files.forEach((file, i) => {
        if (done.has(i) || program[i]!.offPath || !pattern.test(file.text)) return;
        done.add(i);
        added = true;
        const calls = this.analyzer.callsOf(file.text);
        program[i] = { ...program[i]!, calls };
        // Their callers come next: a function that calls one of the names leads towards the entry point.
        for (const [caller, callee] of calls) if (caller && names.has(callee)) names.add(caller);
      });
      if (!added) return;
    }
  }

  /** The project names for torch functions that `files` define (project-aliases.ts), for checkProgram. */
  projectAliases(files: readonly SourceFile[]): ReadonlyMap<string, string> {
    const finals = new Set(this.analyzer.rules.flatMap((r) => (r.calls ?? []).map((c) => c.slice(c.lastIndexOf('.') + 1))));
    return projectAliases(files, (text) => this.parser.parse(text), finals);
  }

  /**
   * A project's own names for torch functions (project-aliases.ts): the files that import one are
   * analysed again with them. Most programs have none, and pay a text search per file.
   */
  private useProjectAliases(analyses: FileAnalysis[], files: readonly SourceFile[], aliases: ReadonlyMap<string, string>, compiled?: ReadonlyMap<string, CompiledAtomic>): void {
    if (aliases.size === 0 && !compiled?.size) return;
    const record = Object.fromEntries(aliases);
    // A file naming one of the compiled extension modules (compiled-extensions.ts) gets their facts too.
    const modules = compiled?.size ? new RegExp(`\\b(?:${[...new Set([...compiled.keys()].map((k) => k.split('.').at(-2)!))].join('|')})\\b`) : undefined;
    const compiledRecord = compiled?.size ? Object.fromEntries(compiled) : undefined;
    files.forEach((file, i) => {
      const callsCompiled = !!modules && file.text.includes('import') && modules.test(file.text);
      if (!callsCompiled && !importsAlias(file, aliases)) return;
      const project = { module: file.module, isPackage: file.isPackage, aliases: record, ...(callsCompiled ? { compiled: compiledRecord } : {}) };
      analyses[i] = this.analyzer.analyzeText(file.text, { torchVersion: file.settings.torchVersion, guardNames: file.settings.guardNames, callEdges: false, project });
    });
  }

  /**
   * Follows the callers of loud hits' functions (no-grad-callers.ts): drops the hits of backward-only
   * rules in functions every call of which runs without gradients, and caps at info any hit in code
   * that only test functions reach (a toy model a library module builds in its own `test_*`). Only the
   * names of such hits' functions are looked up, in the files on the training path that mention
   * them, and then their callers' names: most programs parse nothing more.
   */
  private followCallers(analyses: FileAnalysis[], files: readonly SourceFile[]): void {
    const loud = (c: FileAnalysis['candidates'][number]) => !!c.functions && Object.values(c.outcomes).some((o) => o.severity !== 'info');
    if (!analyses.some((a) => a.candidates.some(loud))) return;
    // Parsed lazily, one file at a time, the defining file first: most names are ruled out by a use
    // next to their definition (a call from module level, a reference passed on) before any other file
    // is read. A file is parsed once, for every name of the program's loud candidates it mentions (one
    // parse per name made a program of many hazards quadratic: 200 files, 16,000 findings, 39 s).
    const names = [...new Set(analyses.flatMap((a) => a.candidates.filter(loud).flatMap((c) => c.functions!)))];
    const parsed = new Map<number, Map<string, NameUses>>();
    const usesIn = (file: number, name: string): NameUses => {
      const text = files[file]!.text;
      let uses = parsed.get(file);
      if (!uses) parsed.set(file, (uses = this.analyzer.usesOf(text, names.filter((n) => new RegExp(`\\b${n}\\b`).test(text)))));
      // A caller's name (the search climbs from a function to the functions calling it) is read on demand.
      if (!uses.has(name)) uses.set(name, this.analyzer.usesOf(text, [name]).get(name)!);
      return uses.get(name)!;
    };
    const lookup = function* (name: string, first: number): Generator<FileUses> {
      const word = new RegExp(`\\b${name}\\b`);
      const order = [first, ...files.keys()].filter((i, k) => k === 0 || i !== first);
      for (const i of order) if (!files[i]!.offPath && word.test(files[i]!.text)) yield { file: i, uses: usesIn(i, name) };
    };
    const answers = new Map<string, boolean>();
    const ask = (question: typeof runsOnlyWithoutGrad, file: number) => (name: string) => {
      const key = `${question === runsOnlyWithoutGrad ? 'grad' : 'test'}\u0000${file}\u0000${name}`;
      let answer = answers.get(key);
      if (answer === undefined) answers.set(key, (answer = question(name, file, lookup)));
      return answer;
    };
    analyses.forEach((analysis, i) => {
      // A user who asks for test code reported (`test-code = "report"`) gets what tests reach too.
      const capsTests = files[i]!.settings.testCode !== 'report';
      let changed = false;
      const candidates = analysis.candidates.flatMap((c) => {
        if (!loud(c)) return [c];
        if (c.rule.backwardOnly && c.functions!.some(ask(runsOnlyWithoutGrad, i))) return (changed = true), [];
        const test = capsTests ? c.functions!.find(ask(reachedOnlyFromTests, i)) : undefined;
        if (!test) return [c];
        changed = true;
        return [atMostInfo(c, `Only test functions reach \`${test}\` here, so this is test code.`)];
      });
      if (changed) analyses[i] = { ...analysis, candidates };
    });
  }

  /**
   * Caps at info the hits that run only under a kernel switch (`if USE_SPLIT_K:`) every launch of
   * which, across the training-path files, leaves it off by default (launch-switches.ts): the
   * default path takes the kernel's other branch. `launchers`: every checked file, as a sub-project
   * (a framework's bindings with their own pyproject) launches its parent's kernels. Only files
   * naming the kernel are parsed.
   */
  private quietOffByLaunch(analyses: FileAnalysis[], launchers: readonly SourceFile[]): void {
    const loud = (c: FileAnalysis['candidates'][number]) => !!c.launchSwitch && Object.values(c.outcomes).some((o) => o.severity !== 'info');
    if (!analyses.some((a) => a.candidates.some(loud))) return;
    const answers = new Map<string, boolean>();
    const offEverywhere = ({ kernel, param }: LaunchSwitch): boolean => {
      const key = `${kernel}\u0000${param}`;
      let answer = answers.get(key);
      if (answer === undefined) {
        const word = new RegExp(`\\b${kernel}\\s*\\[`);
        const values = launchers.filter((f) => !f.offPath && word.test(f.text)).flatMap((f) => this.analyzer.launchSwitchValues(f.text, { kernel, param }));
        answers.set(key, (answer = values.length > 0 && values.every((v) => v === 'off')));
      }
      return answer;
    };
    analyses.forEach((analysis, i) => {
      let changed = false;
      const candidates = analysis.candidates.map((c) => {
        if (!loud(c) || !offEverywhere(c.launchSwitch!)) return c;
        changed = true;
        return atMostInfo(c, `Every launch of \`${c.launchSwitch!.kernel}\` leaves \`${c.launchSwitch!.param}\` off by default, so this runs only when a caller turns it on.`);
      });
      if (changed) analyses[i] = { ...analysis, candidates };
    });
  }

  /**
   * Checks files of several projects, each project one program (`bitexact check` and the server's
   * "check workspace" both come here, so both report the same findings). `analysed`: per-file
   * analyses already made (worker threads); the rest are made here. `compiled`: what the
   * projects' compiled extensions reach (workspace/extension-sources.ts).
   */
  checkPrograms(files: readonly ProgramSource[], analysed?: ReadonlyMap<SourceFile, FileAnalysis>, compiled?: ReadonlyMap<string, CompiledAtomic>): CheckedFile[] {
    const results = new Array<CheckedFile>(files.length);
    const groups = new Map<string, number[]>();
    files.forEach((f, i) => {
      // Nothing imports a notebook: its mode switch is its own, and the project's modules' are not
      // seen from it (a kernel runs the cells, not the project's entry points).
      const key = f.isNotebook ? `notebook:${f.root}\u0000${f.path}` : f.root;
      const group = groups.get(key);
      if (group) group.push(i);
      else groups.set(key, [i]);
    });
    const modules = files.filter((f) => !f.isNotebook);
    const aliases = this.projectAliases(modules);
    for (const indices of groups.values()) {
      const checked = this.checkProgram(indices.map((i) => files[i]!), analysed, aliases, modules, compiled);
      indices.forEach((fileIndex, k) => (results[fileIndex] = checked[k]!));
    }
    return results;
  }

  /**
   * Drops the hits that stand only while torch is unseeded (`Candidate.seededBy`: a training entry
   * point) when a function their code calls from another file seeds it: its definition, found by
   * name in the training-path files (`def setup(`), calls a seed function (seeding-functions.ts),
   * itself or through the imported functions it calls. Only files defining such a name are parsed.
   */
  private dropSeededByCallees(analyses: FileAnalysis[], files: readonly SourceFile[]): void {
    const loud = (c: FileAnalysis['candidates'][number]) => !!c.seededBy && Object.values(c.outcomes).some((o) => o.severity !== 'info');
    if (!analyses.some((a) => a.candidates.some(loud))) return;
    // Each name's definitions (training-path files with a module-level `def name(`), read once.
    const read = new Map<string, FunctionSeeding[]>();
    const readName = (name: string): FunctionSeeding[] => {
      let found = read.get(name);
      if (!found) {
        const def = new RegExp(`^(async\\s+)?def\\s+${name}\\s*\\(`, 'm');
        read.set(name, (found = files.filter((f) => !f.offPath && def.test(f.text)).map((f) => this.analyzer.functionSeedsTorch(f.text, name))));
      }
      return found;
    };
    // Through the imported functions those call in turn, three files deep (setup -> default_setup's module -> ...).
    const seeds = (name: string): boolean => {
      const seen = new Set([name]);
      let level = [name];
      for (let depth = 0; depth < 3 && level.length; depth++) {
        const next: string[] = [];
        for (const n of level) {
          for (const found of readName(n)) {
            if (found.seeds) return true;
            for (const m of found.imported) if (!seen.has(m)) (seen.add(m), next.push(m));
          }
        }
        level = next;
      }
      return false;
    };
    analyses.forEach((analysis, i) => {
      const kept = analysis.candidates.filter((c) => !loud(c) || !c.seededBy!.some(seeds));
      if (kept.length !== analysis.candidates.length) analyses[i] = { ...analysis, candidates: kept };
    });
  }

  /**
   * Checks files that form one program: deterministic mode turned on where the program's default
   * path runs it (e.g. in train.py, program.ts) applies to the ops in all of them (e.g. in model.py).
   */
  checkProgram(files: readonly SourceFile[], analysed?: ReadonlyMap<SourceFile, FileAnalysis>, aliases?: ReadonlyMap<string, string>, launchers?: readonly SourceFile[], compiled?: ReadonlyMap<string, CompiledAtomic>): CheckedFile[] {
    const kept = files.filter((f) => !(f.offPath && f.settings.testCode === 'skip'));
    // `analysed`: the per-file analyses already made (by worker threads, cli/analysis-pool.ts).
    const analyses = kept.map((f) => analysed?.get(f) ?? this.analyzeForProgram(f.text, f.settings));
    // `aliases`: collected over every checked file (a sub-project imports its parent's modules).
    // `compiled`: what the project's compiled extensions reach, by `module.function` (workspace/extension-sources.ts).
    this.useProjectAliases(analyses, kept, aliases ?? this.projectAliases(kept), compiled);
    const program: ProgramFile[] = analyses.map((a, i) => ({ offPath: kept[i]!.offPath, modeSettings: a.modeSettings, calls: [] as CallEdge[], trains: showsTraining(kept[i]!.text), seeds: showsSeeding(kept[i]!.text), ownRun: runsOnItsOwn(kept[i]!.text) }));
    this.addCallEdges(program, kept);
    this.followCallers(analyses, kept);
    this.quietOffByLaunch(analyses, launchers ?? kept);
    this.dropSeededByCallees(analyses, kept);
    const view: ProgramView = { mode: programMode(program), trains: programTrains(program), unseeded: programUnseeded(program) };
    const checked = new Map(kept.map((file, i) => [file, {
      path: file.path,
      findings: this.resolve(analyses[i]!, file.text, file.settings, { ...view, mode: programModeFor(program, i, view.mode) }, file.offPath),
      syntaxErrors: analyses[i]!.syntaxErrors,
      ...(analyses[i]!.ruleErrors ? { ruleErrors: analyses[i]!.ruleErrors } : {}),
    }]));
    return files.map((file) => checked.get(file) ?? { path: file.path, findings: [], syntaxErrors: [] });
  }
}

/** A candidate capped at info in every mode, with why in its detail. */
function atMostInfo(c: FileAnalysis['candidates'][number], note: string): FileAnalysis['candidates'][number] {
  const outcomes: Outcomes = {};
  for (const [mode, o] of Object.entries(c.outcomes) as Array<[keyof Outcomes, ModeOutcome]>) {
    const { whenProgramTrains: _trains, whenProgramUnseeded: _unseeded, ...rest } = o;
    outcomes[mode] = { ...rest, severity: o.severity === 'hint' ? 'hint' : 'info', detail: o.detail ? `${o.detail} ${note}` : note };
  }
  return { ...c, outcomes };
}

/** The `deterministic-mode` setting wins over what the code shows, unless it is 'auto'. */
export function effectiveMode(settings: Settings, detected: DeterministicMode): DeterministicMode {
  return settings.deterministicMode === 'auto' ? detected : settings.deterministicMode;
}

export type { ModeSetting };
export { ChunkCache } from './chunk-cache.js';
export { ResolveMemo } from './resolve.js';
export { programMode, programTrains, showsTraining };
export type { ProgramView };
export { isOffPath } from './roles.js';
