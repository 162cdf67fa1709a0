// The cross-file passes of one program, shared by `bitexact check` (Checker.checkProgram: every file
// of the program) and the language server (one open document against its project index,
// lsp/project-index.ts), so that both give the same findings: backward-only hits in functions only
// ever called without gradients, kernel switches every launch leaves off, unseeded-program hits a
// helper of another file seeds, and the program's mode, training and seeding facts. What the passes
// read of the program's files (a word search, a parse for one name) is memoised per SourceFile
// object by a ProgramReader (program-reader.ts), and what they ask of the program (is this function
// only called without gradients...) per state of its files by ProgramQuestions (program-questions.ts):
// the server keeps both between pulls.
import type { FileAnalysis } from './engine.js';
import { showsTraining } from './autograd.js';
import { MODE_SWITCHES } from './facts.js';
import type { CompiledAtomic } from './compiled-extensions.js';
import { CallEdge, ProgramFile, ProgramView, programMode, programModeFor, programTrains, programUnseeded, reachedSwitches, runsOnItsOwn, showsSeeding } from './program.js';
import { importsAlias, ProjectAliases } from './project-aliases.js';
import type { ProjectContext } from './scope.js';
import type { ModeOutcome, Outcomes } from './rules/rule.js';
import { ProgramReader, SourceFile } from './program-reader.js';
import { ProgramQuestions } from './program-questions.js';
import { namesCompiled } from './compiled-program.js';

export { ProgramQuestions, ProgramReader, type SourceFile };

type Candidate = FileAnalysis['candidates'][number];

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

/**
 * What a whole-model compile on the training path builds: everything in the files that compile one
 * by default (compiled-models.ts; only those naming a `.compile(` call are parsed), and the classes
 * and functions they import from the project's other files (compiled-program.ts).
 */
export function addCompiledModels(reader: ProgramReader, program: ProgramFile[], files: readonly SourceFile[]): void {
  const compiling = files.map((file, i) => !program[i]!.offPath && reader.compilesWholeModel(file));
  namesCompiled(files, compiling).forEach((names, i) => {
    if (names && !program[i]!.offPath) program[i] = { ...program[i]!, compiled: names };
  });
}

/** The facts of a whole program (after addCallEdges): its mode, whether it trains, whether it is unseeded. */
export function programWideView(program: readonly ProgramFile[]): ProgramView {
  return { mode: programMode(program), trains: programTrains(program), unseeded: programUnseeded(program) };
}

/** The program facts file `index` resolves its hits with: an own-run script adds its own switches; a compile reaching it (addCompiledModels). */
export function programViewFor(program: readonly ProgramFile[], index: number, wide = programWideView(program)): ProgramView {
  return { ...wide, mode: programModeFor(program, index, wide.mode), ...(program[index]?.compiled ? { compiles: program[index]!.compiled } : {}) };
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
  addCompiledModels(reader, facts, program.files);
  return facts;
}

/**
 * File `index` of a program finished as Checker.checkProgram finishes each of its files: the
 * cross-file passes on its analysis, and the program view its hits resolve with. The language
 * server's answer for an open document, equal to `bitexact check`'s for the same texts.
 */
export function finishFile(questions: ProgramQuestions, program: ProgramOfFiles, index: number, analysis: FileAnalysis): { analysis: FileAnalysis; view: ProgramView } {
  const facts = reachableFacts(questions.reader, program);
  const finished = crossFilePasses(questions, new Map([[index, analysis]])).get(index)!;
  return { analysis: finished, view: programViewFor(facts, index) };
}

/**
 * The cross-file passes over the analyses of `targets` (file index in the questions' files → its
 * analysis): every file for `bitexact check`, the open document for the server. Returns the targets'
 * analyses with the hits the program rules out dropped or quieted. The questions' launchers: every
 * checked file, as a sub-project (a framework's bindings with their own pyproject) launches its
 * parent's kernels. Each pass decides of one candidate alone, so a candidate goes through the three
 * in turn, and what they made of it is kept with the questions (an unchanged function's hits are not
 * decided again while the program's files stay as they were).
 */
export function crossFilePasses(questions: ProgramQuestions, targets: ReadonlyMap<number, FileAnalysis>): Map<number, FileAnalysis> {
  const analyses = new Map(targets);
  for (const i of targets.keys()) questions.begin(i);
  // At the first candidate to decide, the functions of every loud hit still undecided: their uses are
  // read with one parse per file.
  let expected = false;
  const decide = (i: number, c: Candidate) => {
    if (!expected) for (const [k, analysis] of targets) questions.expect(analysis.candidates.filter((d) => !questions.decided(k, d) && loudInFunctions(d)).flatMap((d) => d.functions!));
    expected = true;
    return passesOn(questions, i, c);
  };
  for (const [i, analysis] of targets) {
    // A plain loop: on a dense file's pull this runs over a thousand candidates, nearly all decided already.
    const decideHere = (c: Candidate) => decide(i, c);
    let changed = false;
    const candidates: Candidate[] = [];
    for (const c of analysis.candidates) {
      const kept = questions.outcome(i, c, decideHere);
      if (kept !== c) changed = true;
      if (kept) candidates.push(kept);
    }
    if (changed) analyses.set(i, { ...analysis, candidates });
  }
  return analyses;
}

const loudWhere = (has: (c: Candidate) => boolean) => (c: Candidate) => has(c) && Object.values(c.outcomes).some((o) => o.severity !== 'info');
const loudInFunctions = loudWhere((c) => !!c.functions);
const loudUnderSwitch = loudWhere((c) => !!c.launchSwitch);
const loudWhileUnseeded = loudWhere((c) => !!c.seededBy);

/** Candidate `c` of file `i` through the three passes: undefined when one drops it. */
function passesOn(questions: ProgramQuestions, i: number, c: Candidate): Candidate | undefined {
  const followed = followCallers(questions, i, c);
  return followed && dropSeededByCallees(questions, i, quietOffByLaunch(questions, i, followed));
}

/**
 * Follows the callers of loud hits' functions (no-grad-callers.ts): drops the hits of backward-only
 * rules in functions every call of which runs without gradients, and caps at info any hit in code
 * that only test functions reach (a toy model a library module builds in its own `test_*`). Only the
 * names of such hits' functions are looked up, in the files on the training path that mention
 * them, and then their callers' names: most programs parse nothing more. A file is parsed once, for
 * every name of the loud candidates it mentions (one parse per name made a program of many hazards
 * quadratic: 200 files, 16,000 findings, 39 s).
 */
function followCallers(questions: ProgramQuestions, i: number, c: Candidate): Candidate | undefined {
  if (!loudInFunctions(c)) return c;
  if (c.rule.backwardOnly && c.functions!.some((name) => questions.noGradOnly(name, i, i))) return undefined;
  // A user who asks for test code reported (`test-code = "report"`) gets what tests reach too.
  const capsTests = questions.files[i]!.settings.testCode !== 'report';
  const test = capsTests ? c.functions!.find((name) => questions.testOnly(name, i, i)) : undefined;
  return test ? atMostInfo(questions, c, `Only test functions reach \`${test}\` here, so this is test code.`) : c;
}

/**
 * Caps at info the hits that run only under a kernel switch (`if USE_SPLIT_K:`) every launch of
 * which, across the training-path files, leaves it off by default (launch-switches.ts): the
 * default path takes the kernel's other branch. Only files naming the kernel are parsed.
 */
function quietOffByLaunch(questions: ProgramQuestions, i: number, c: Candidate): Candidate {
  if (!loudUnderSwitch(c) || !questions.launchOff(c.launchSwitch!, i)) return c;
  return atMostInfo(questions, c, `Every launch of \`${c.launchSwitch!.kernel}\` leaves \`${c.launchSwitch!.param}\` off by default, so this runs only when a caller turns it on.`);
}

/**
 * Drops the hits that stand only while torch is unseeded (`Candidate.seededBy`: a training entry
 * point) when a function their code calls from another file seeds it: its definition, found by
 * name in the training-path files (`def setup(`), calls a seed function (seeding-functions.ts),
 * itself or through the imported functions it calls. Only files defining such a name are parsed.
 */
function dropSeededByCallees(questions: ProgramQuestions, i: number, c: Candidate): Candidate | undefined {
  return loudWhileUnseeded(c) && c.seededBy!.some((name) => questions.seeds(name, i)) ? undefined : c;
}

/** A candidate capped at info in every mode, with why in its detail (the same object for the same candidate and note). */
function atMostInfo(questions: ProgramQuestions, c: Candidate, note: string): Candidate {
  return questions.cap(c, note, () => {
    const outcomes: Outcomes = {};
    for (const [mode, o] of Object.entries(c.outcomes) as Array<[keyof Outcomes, ModeOutcome]>) {
      const { whenProgramTrains: _trains, whenProgramUnseeded: _unseeded, ...rest } = o;
      outcomes[mode] = { ...rest, severity: o.severity === 'hint' ? 'hint' : 'info', detail: o.detail ? `${o.detail} ${note}` : note };
    }
    return { ...c, outcomes };
  });
}
