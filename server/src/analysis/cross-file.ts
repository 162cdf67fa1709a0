// The cross-file passes of one program, shared by `bitexact check` (Checker.checkProgram: every file
// of the program) and the language server (one open document against its project index,
// lsp/project-index.ts), so that both give the same findings: backward-only hits in functions only
// ever called without gradients, kernel switches every launch leaves off, unseeded-program hits a
// helper of another file seeds, and the program's mode, training and seeding facts. What the passes
// read of the program's files (a word search, a parse for one name) is memoised per SourceFile
// object by a ProgramReader: the server keeps one for as long as a file's text is unchanged.
import type { Analyzer, FileAnalysis } from './engine.js';
import type { Settings } from './config.js';
import { showsTraining } from './autograd.js';
import { MODE_SWITCHES } from './facts.js';
import type { CompiledAtomic } from './compiled-extensions.js';
import { FileUses, NameUses, reachedOnlyFromTests, runsOnlyWithoutGrad } from './no-grad-callers.js';
import { CallEdge, ProgramFile, ProgramView, programMode, programModeFor, programTrains, programUnseeded, reachedSwitches, runsOnItsOwn, showsSeeding } from './program.js';
import { importsAlias, ProjectAliases } from './project-aliases.js';
import type { ProjectContext } from './scope.js';
import type { FunctionSeeding } from './seeding-functions.js';
import type { SwitchValue } from './launch-switches.js';
import type { LaunchSwitch, ModeOutcome, Outcomes } from './rules/rule.js';

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

type Candidate = FileAnalysis['candidates'][number];

/** What the passes read of a program's files, each answer kept per SourceFile (one text of one file). */
export class ProgramReader {
  /**
   * Work done, counted (the server's bitexact/stats): the passes' questions answered afresh (is a
   * function only ever called without gradients, a kernel switch left off...), and the files read
   * for an answer not yet kept, per kind (a parse for calls, uses, seeding or launches; a text search).
   */
  readonly counts = { questions: 0, calls: 0, uses: 0, seeds: 0, launches: 0, mentions: 0 };
  private readonly memo = new WeakMap<SourceFile, Map<string, unknown>>();

  constructor(private readonly analyzer: Analyzer) {}

  private cached<T>(file: SourceFile, key: string, make: () => T): T {
    let answers = this.memo.get(file);
    if (!answers) this.memo.set(file, (answers = new Map()));
    if (answers.has(key)) return answers.get(key) as T;
    const answer = make();
    answers.set(key, answer);
    return answer;
  }

  /** Does the file's text match `pattern` (a name's uses, a definition, a launch)? */
  mentions(file: SourceFile, pattern: RegExp): boolean {
    return this.cached(file, `m\u0000${pattern.source}\u0000${pattern.flags}`, () => (this.counts.mentions++, pattern.test(file.text)));
  }

  /** The file's unconditional calls (program.ts); `known`: already read from a parse made anyway. */
  callsOf(file: SourceFile, known?: CallEdge[]): CallEdge[] {
    return this.cached(file, 'calls', () => known ?? (this.counts.calls++, this.analyzer.callsOf(file.text)));
  }

  /** The uses of `name` in the file; one parse answers every name of `batch` the file mentions. */
  usesOf(file: SourceFile, name: string, batch: readonly string[]): NameUses {
    const key = (n: string) => `u\u0000${n}`;
    const answers = this.memo.get(file);
    if (answers?.has(key(name))) return answers.get(key(name)) as NameUses;
    const names = [...new Set([name, ...batch.filter((n) => this.mentions(file, new RegExp(`\\b${n}\\b`)))])].filter((n) => !answers?.has(key(n)));
    this.counts.uses++;
    const uses = this.analyzer.usesOf(file.text, names);
    for (const n of names) this.cached(file, key(n), () => uses.get(n)!);
    return this.memo.get(file)!.get(key(name)) as NameUses;
  }

  functionSeedsTorch(file: SourceFile, name: string): FunctionSeeding {
    return this.cached(file, `s\u0000${name}`, () => (this.counts.seeds++, this.analyzer.functionSeedsTorch(file.text, name)));
  }

  launchSwitchValues(file: SourceFile, launch: LaunchSwitch): SwitchValue[] {
    return this.cached(file, `l\u0000${launch.kernel}\u0000${launch.param}`, () => (this.counts.launches++, this.analyzer.launchSwitchValues(file.text, launch)));
  }
}

/** One file's program facts from its analysis and text (its calls are read later, where needed). */
export function programFileOf(file: SourceFile, analysis: Pick<FileAnalysis, 'modeSettings'>): ProgramFile {
  return { offPath: file.offPath, modeSettings: analysis.modeSettings, calls: [], trains: showsTraining(file.text), seeds: showsSeeding(file.text), ownRun: runsOnItsOwn(file.text) };
}

/** The last names of the mode switches (facts.ts MODE_SWITCHES): a call of one is how a file sets the mode. */
const MODE_SWITCH_NAMES = new RegExp(`\\b(?:${[...new Set([...MODE_SWITCHES].map((s) => s.slice(s.lastIndexOf('.') + 1)))].join('|')})\\b`);

/**
 * Can the file set the deterministic mode? A file naming no switch has no mode settings (a call of
 * one names it, and so does any local alias of it), so only the others need an analysis for them
 * (a project alias of one is the caller's: projectOptionFor).
 */
export function mayHaveModeSwitch(text: string): boolean {
  return MODE_SWITCH_NAMES.test(text);
}

/** The modules of compiled extensions, as a word pattern, per map of their functions. */
const COMPILED_MODULES = new WeakMap<ReadonlyMap<string, CompiledAtomic>, RegExp>();

/**
 * The project context a file is analysed with: the project's aliases when it imports one, and the
 * compiled extensions' facts when it names one of their modules; undefined when neither (most files).
 */
export function projectOptionFor(file: SourceFile, aliases: ProjectAliases, compiled?: ReadonlyMap<string, CompiledAtomic>): ProjectContext | undefined {
  let modules = compiled?.size ? COMPILED_MODULES.get(compiled) : undefined;
  if (compiled?.size && !modules) COMPILED_MODULES.set(compiled, (modules = new RegExp(`\\b(?:${[...new Set([...compiled.keys()].map((k) => k.split('.').at(-2)!))].join('|')})\\b`)));
  const callsCompiled = !!modules && file.text.includes('import') && modules.test(file.text);
  if (!callsCompiled && !importsAlias(file, aliases)) return undefined;
  return { module: file.module, isPackage: file.isPackage, aliases: Object.fromEntries(aliases), ...(callsCompiled ? { compiled: Object.fromEntries(compiled!) } : {}) };
}

/**
 * Call edges are read only where reachability needs them: when a mode switch inside a function is
 * not yet reached, the files naming that function (and then the functions calling it, and so on)
 * are parsed for their calls. Most programs have no such switch, and pay nothing.
 */
export function addCallEdges(reader: ProgramReader, program: ProgramFile[], files: readonly SourceFile[]): void {
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
      if (done.has(i) || program[i]!.offPath || !reader.mentions(file, pattern)) return;
      done.add(i);
      added = true;
      const calls = reader.callsOf(file);
      program[i] = { ...program[i]!, calls };
      // Their callers come next: a function that calls one of the names leads towards the entry point.
      for (const [caller, callee] of calls) if (caller && names.has(callee)) names.add(caller);
    });
    if (!added) return;
  }
}

/** The facts of a whole program (after addCallEdges): its mode, whether it trains, whether it is unseeded. */
export function programWideView(program: readonly ProgramFile[]): ProgramView {
  return { mode: programMode(program), trains: programTrains(program), unseeded: programUnseeded(program) };
}

/** The program facts file `index` resolves its hits with: an own-run script adds its own switches. */
export function programViewFor(program: readonly ProgramFile[], index: number, wide = programWideView(program)): ProgramView {
  return { ...wide, mode: programModeFor(program, index, wide.mode) };
}

/** A program as the language server holds it (lsp/project-index.ts): every file of its project. */
export interface ProgramOfFiles {
  files: readonly SourceFile[];
  facts: readonly ProgramFile[];
  /** Every checked file: a sub-project launches its parent's kernels (crossFilePasses). */
  launchers: readonly SourceFile[];
  /** Each file's calls where an analysis has read them already; the others are read when needed. */
  calls?: ReadonlyArray<CallEdge[] | undefined>;
}

/** The program's facts with the calls its reachability reads, as Checker.checkProgram reads them. */
export function reachableFacts(reader: ProgramReader, program: ProgramOfFiles): ProgramFile[] {
  program.calls?.forEach((calls, i) => calls && reader.callsOf(program.files[i]!, calls));
  // As the CLI: no calls until reachability asks for them (a deep chain is cut where the CLI's is).
  const facts = program.facts.map((f) => ({ ...f, calls: [] }));
  addCallEdges(reader, facts, program.files);
  return facts;
}

/**
 * File `index` of a program finished as Checker.checkProgram finishes each of its files: the
 * cross-file passes on its analysis, and the program view its hits resolve with. The language
 * server's answer for an open document, equal to `bitexact check`'s for the same texts.
 */
export function finishFile(reader: ProgramReader, program: ProgramOfFiles, index: number, analysis: FileAnalysis): { analysis: FileAnalysis; view: ProgramView } {
  const facts = reachableFacts(reader, program);
  const finished = crossFilePasses(reader, program.files, program.launchers, new Map([[index, analysis]])).get(index)!;
  return { analysis: finished, view: programViewFor(facts, index) };
}

/**
 * The cross-file passes over the analyses of `targets` (file index in `files` → its analysis):
 * every file for `bitexact check`, the open document for the server. Returns the targets' analyses
 * with the hits the program rules out dropped or quieted. `launchers`: every checked file, as a
 * sub-project (a framework's bindings with their own pyproject) launches its parent's kernels.
 */
export function crossFilePasses(reader: ProgramReader, files: readonly SourceFile[], launchers: readonly SourceFile[], targets: ReadonlyMap<number, FileAnalysis>): Map<number, FileAnalysis> {
  const analyses = new Map(targets);
  followCallers(reader, analyses, files);
  quietOffByLaunch(reader, analyses, launchers);
  dropSeededByCallees(reader, analyses, files);
  return analyses;
}

const loudWhere = (has: (c: Candidate) => boolean) => (c: Candidate) => has(c) && Object.values(c.outcomes).some((o) => o.severity !== 'info');

function keepWhere(analyses: Map<number, FileAnalysis>, keep: (c: Candidate, file: number) => boolean): void {
  for (const [i, analysis] of analyses) {
    const kept = analysis.candidates.filter((c) => keep(c, i));
    if (kept.length !== analysis.candidates.length) analyses.set(i, { ...analysis, candidates: kept });
  }
}

/**
 * Follows the callers of loud hits' functions (no-grad-callers.ts): drops the hits of backward-only
 * rules in functions every call of which runs without gradients, and caps at info any hit in code
 * that only test functions reach (a toy model a library module builds in its own `test_*`). Only the
 * names of such hits' functions are looked up, in the files on the training path that mention
 * them, and then their callers' names: most programs parse nothing more.
 */
function followCallers(reader: ProgramReader, analyses: Map<number, FileAnalysis>, files: readonly SourceFile[]): void {
  const loud = loudWhere((c) => !!c.functions);
  if (![...analyses.values()].some((a) => a.candidates.some(loud))) return;
  // Parsed lazily, one file at a time, the defining file first: most names are ruled out by a use
  // next to their definition (a call from module level, a reference passed on) before any other file
  // is read. A file is parsed once, for every name of the loud candidates it mentions (one parse per
  // name made a program of many hazards quadratic: 200 files, 16,000 findings, 39 s).
  const names = [...new Set([...analyses.values()].flatMap((a) => a.candidates.filter(loud).flatMap((c) => c.functions!)))];
  const lookup = function* (name: string, first: number): Generator<FileUses> {
    const word = new RegExp(`\\b${name}\\b`);
    const order = [first, ...files.keys()].filter((i, k) => k === 0 || i !== first);
    for (const i of order) if (!files[i]!.offPath && reader.mentions(files[i]!, word)) yield { file: i, uses: reader.usesOf(files[i]!, name, names) };
  };
  const answers = new Map<string, boolean>();
  const ask = (question: typeof runsOnlyWithoutGrad, file: number) => (name: string) => {
    const key = `${question === runsOnlyWithoutGrad ? 'grad' : 'test'}\u0000${file}\u0000${name}`;
    let answer = answers.get(key);
    if (answer === undefined) answers.set(key, (answer = (reader.counts.questions++, question(name, file, lookup))));
    return answer;
  };
  for (const [i, analysis] of analyses) {
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
    if (changed) analyses.set(i, { ...analysis, candidates });
  }
}

/**
 * Caps at info the hits that run only under a kernel switch (`if USE_SPLIT_K:`) every launch of
 * which, across the training-path files, leaves it off by default (launch-switches.ts): the
 * default path takes the kernel's other branch. Only files naming the kernel are parsed.
 */
function quietOffByLaunch(reader: ProgramReader, analyses: Map<number, FileAnalysis>, launchers: readonly SourceFile[]): void {
  const loud = loudWhere((c) => !!c.launchSwitch);
  if (![...analyses.values()].some((a) => a.candidates.some(loud))) return;
  const answers = new Map<string, boolean>();
  const offEverywhere = (launch: LaunchSwitch): boolean => {
    const key = `${launch.kernel}\u0000${launch.param}`;
    let answer = answers.get(key);
    if (answer === undefined) {
      reader.counts.questions++;
      const word = new RegExp(`\\b${launch.kernel}\\s*\\[`);
      const values = launchers.filter((f) => !f.offPath && reader.mentions(f, word)).flatMap((f) => reader.launchSwitchValues(f, launch));
      answers.set(key, (answer = values.length > 0 && values.every((v) => v === 'off')));
    }
    return answer;
  };
  for (const [i, analysis] of analyses) {
    let changed = false;
    const candidates = analysis.candidates.map((c) => {
      if (!loud(c) || !offEverywhere(c.launchSwitch!)) return c;
      changed = true;
      return atMostInfo(c, `Every launch of \`${c.launchSwitch!.kernel}\` leaves \`${c.launchSwitch!.param}\` off by default, so this runs only when a caller turns it on.`);
    });
    if (changed) analyses.set(i, { ...analysis, candidates });
  }
}

/**
 * Drops the hits that stand only while torch is unseeded (`Candidate.seededBy`: a training entry
 * point) when a function their code calls from another file seeds it: its definition, found by
 * name in the training-path files (`def setup(`), calls a seed function (seeding-functions.ts),
 * itself or through the imported functions it calls. Only files defining such a name are parsed.
 */
function dropSeededByCallees(reader: ProgramReader, analyses: Map<number, FileAnalysis>, files: readonly SourceFile[]): void {
  const loud = loudWhere((c) => !!c.seededBy);
  if (![...analyses.values()].some((a) => a.candidates.some(loud))) return;
  // Each name's definitions (training-path files with a module-level `def name(`), read once.
  const read = new Map<string, FunctionSeeding[]>();
  const readName = (name: string): FunctionSeeding[] => {
    let found = read.get(name);
    if (!found) {
      const def = new RegExp(`^(async\\s+)?def\\s+${name}\\s*\\(`, 'm');
      read.set(name, (found = files.filter((f) => !f.offPath && reader.mentions(f, def)).map((f) => reader.functionSeedsTorch(f, name))));
    }
    return found;
  };
  // Through the imported functions those call in turn, three files deep (setup -> default_setup's module -> ...).
  const seeds = (name: string): boolean => {
    reader.counts.questions++;
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
  keepWhere(analyses, (c) => !loud(c) || !c.seededBy!.some(seeds));
}

/** A candidate capped at info in every mode, with why in its detail. */
function atMostInfo(c: Candidate, note: string): Candidate {
  const outcomes: Outcomes = {};
  for (const [mode, o] of Object.entries(c.outcomes) as Array<[keyof Outcomes, ModeOutcome]>) {
    const { whenProgramTrains: _trains, whenProgramUnseeded: _unseeded, ...rest } = o;
    outcomes[mode] = { ...rest, severity: o.severity === 'hint' ? 'hint' : 'info', detail: o.detail ? `${o.detail} ${note}` : note };
  }
  return { ...c, outcomes };
}
