// The language server's index of the workspace's files, so that an open document is checked against
// its whole project as `bitexact check` checks it (cross-file.ts finishFile): every Python file's
// text and program facts (training, seeding, an own-run script), the mode switches of the files that
// can hold one (only those are analysed), the project's aliases for torch functions and what its
// compiled extensions reach. It is built once at start; a diagnostics request waits for it, so the
// first answer is already the CLI's (an answer made before the index was complete kept hits that the
// CLI drops). Saved changes (workspace/didChangeWatchedFiles) update it one file at a time, and then
// the session marks every result stale and the client pulls again.
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CompiledAtomic } from '../analysis/compiled-extensions.js';
import type { Settings } from '../analysis/config.js';
import { finishFile, mayHaveModeSwitch, programFileOf, ProgramQuestions, ProgramReader, programViewFor, projectOptionFor, reachableFacts } from '../analysis/cross-file.js';
import type { FileAnalysis } from '../analysis/engine.js';
import type { Checker, ProgramSource } from '../analysis/index.js';
import { ProgramFile, ProgramView, programModeFor, unreachedSwitches } from '../analysis/program.js';
import type { DeterministicMode } from '../analysis/types.js';
import type { ProjectAliases } from '../analysis/project-aliases.js';
import type { ProjectContext } from '../analysis/scope.js';
import { compiledExtensions } from '../workspace/extension-sources.js';
import { readSource, sizeRefusal } from '../workspace/files.js';
import type { DocumentStore } from './documents.js';
import type { EditorSettings } from './settings.js';
import type { IndexedProgram, WorkspaceModel } from './workspace.js';
import type { AnalyseMany } from './workspace-scan.js';

export interface IndexDeps {
  checker: Checker;
  workspace: WorkspaceModel;
  docs: DocumentStore;
  /** The workspace's Python files that `bitexact check` on each folder would check. */
  includedFiles: () => Promise<string[]>;
  /** Whether one file is among them (a file saved or created after the build). */
  isIncluded: (file: string) => Promise<boolean>;
  globalEditor: () => EditorSettings;
  folders: () => readonly string[];
  analyseMany?: AnalyseMany;
  log: (level: 'info' | 'debug', message: string) => void;
  /** Called at the end of each change of the index, before a request waiting for it goes on. */
  changed: () => void;
}

/** A saved change the client reports: a file written or created, or deleted. */
export interface FileChange {
  file: string;
  deleted: boolean;
}

/** Sources of compiled extensions (workspace/extension-sources.ts reads them): a change re-reads the extensions. */
const EXTENSION_SOURCE = /\.(?:c|cc|cpp|cxx|cu|cuh|h|hh|hpp)$/;

const turn = () => new Promise((resolve) => setImmediate(resolve));

export class ProjectIndex {
  /** What the passes read of the files, kept per text (an unchanged file is never read twice). */
  readonly reader: ProgramReader;
  aliases: ProjectAliases = new Map();
  compiled: ReadonlyMap<string, CompiledAtomic> = new Map();
  /** The index's work, one piece at a time: the build, then each batch of changes. */
  private work: Promise<unknown> = Promise.resolve();
  /** The files the index holds, in the order `bitexact check` lists them. */
  private files: string[] = [];
  /**
   * Per project root, what its open files' passes asked and the files' state it was answered for
   * (program-questions.ts): kept while no file of the program changes, so a pull after an edit that
   * left the program's texts as they were answers nothing afresh.
   */
  private readonly asked = new Map<string, { paths: readonly string[]; questions: ProgramQuestions }>();

  constructor(private readonly deps: IndexDeps) {
    this.reader = deps.checker.reader();
  }

  /** Resolves once the index holds every change reported so far. */
  ready(): Promise<unknown> {
    return this.work;
  }

  /** Reads the whole workspace (at start, and when a pyproject.toml changed). */
  build(): Promise<unknown> {
    return this.queue(async () => {
      const started = Date.now();
      const files = await this.deps.includedFiles();
      const sources: ProgramSource[] = [];
      for (const [k, file] of files.entries()) {
        const source = this.read(file);
        if (source) sources.push(source);
        if (k % 50 === 49) await turn();
      }
      const kept = new Set(sources.map((s) => s.path));
      for (const file of this.files) if (!kept.has(file)) this.deps.workspace.forget(file);
      this.files = sources.map((s) => s.path);
      await this.record(sources, true);
      this.deps.log('info', `indexed ${sources.length} workspace files in ${Date.now() - started} ms`);
    });
  }

  /** Saved changes: the files re-read (an open one keeps its editor text), the project facts again. */
  filesChanged(changes: readonly FileChange[]): Promise<unknown> {
    return this.queue(async () => {
      const python = changes.filter((c) => c.file.endsWith('.py'));
      const changed: ProgramSource[] = [];
      for (const { file, deleted } of python) {
        // A file `bitexact check` would not check (bitexact's own pair folders, a virtual environment,
        // a git-ignored or excluded path) is no part of the program: not taken in.
        if (!deleted && !this.files.includes(file) && !(await this.deps.isIncluded(file))) continue;
        const source = deleted ? undefined : this.read(file);
        if (!source) {
          this.deps.workspace.forget(file);
          this.files = this.files.filter((f) => f !== file);
          continue;
        }
        if (!this.files.includes(file)) this.files.push(file);
        changed.push(source);
      }
      await this.record(changed, python.length > 0 || changes.some((c) => EXTENSION_SOURCE.test(c.file)));
    });
  }

  /** The project context (aliases, compiled extensions) an open file is analysed with, as `bitexact check` would. */
  projectOf(file: string, text: string, settings: Settings): ProjectContext | undefined {
    return projectOptionFor(this.deps.workspace.programSource(file, text, settings), this.aliases, this.compiled);
  }

  /**
   * An open file's analysis finished in its project's program as `bitexact check` finishes it
   * (cross-file.ts finishFile), and the program view it resolves with; `alone`: the view of a file
   * outside any folder, its own program. `othersChanged`: a file of the program changed since the
   * last pull (this one's full analysis took its new text) and another file's questions got another
   * answer: that file's findings are stale.
   */
  finish(file: string | undefined, analysis: FileAnalysis, alone: () => ProgramView): { analysis: FileAnalysis; view: ProgramView; othersChanged: boolean } {
    if (!file) return { analysis, view: alone(), othersChanged: false };
    const indexed = this.deps.workspace.programOf(file);
    const index = indexed.paths.indexOf(file);
    // A test file the project's configuration skips is no part of its program.
    if (index < 0) return { analysis, view: this.programView(file), othersChanged: false };
    const { questions, changed } = this.questionsOf(indexed);
    return { ...finishFile(questions, indexed.program, index, analysis), othersChanged: [...changed].some((p) => p !== file) };
  }

  /**
   * The program's questions as its files stand: those kept if no file changed, else the same asked
   * again of the new texts (or, when files came or went, none yet); and the paths of the files whose
   * answers changed.
   */
  private questionsOf({ root, paths, program }: IndexedProgram): { questions: ProgramQuestions; changed: Set<string> } {
    const held = this.asked.get(root);
    const same = <T>(a: readonly T[], b: readonly T[]) => a.length === b.length && a.every((x, i) => x === b[i]);
    let questions: ProgramQuestions;
    let changed = new Set<string>();
    if (held && same(held.paths, paths)) {
      if (same(held.questions.files, program.files) && same(held.questions.launchers, program.launchers)) questions = held.questions;
      else {
        const renewed = held.questions.renewed(program.files, program.launchers);
        questions = renewed.questions;
        changed = new Set([...renewed.changed].map((i) => paths[i]!));
      }
    } else {
      questions = new ProgramQuestions(this.reader, program.files, program.launchers);
      if (held) changed = new Set(held.questions.askers().map((i) => held.paths[i]!));
    }
    this.asked.set(root, { paths, questions });
    return { questions, changed };
  }

  /** After a change of the index (every result is stale then): the questions asked again of the files as they now stand. */
  private renewQuestions(): void {
    for (const [root, held] of this.asked) {
      const known = held.paths.find((p) => this.deps.workspace.sourceOf(p));
      if (known) this.questionsOf(this.deps.workspace.programOf(known));
      else this.asked.delete(root);
    }
  }

  /** The program view of a file of the workspace as its project's files stand (a closed file's). */
  programView(file: string): ProgramView {
    const { paths, facts } = this.reached(file);
    return programViewFor(facts, paths.indexOf(file));
  }

  /** The deterministic mode the project of `file` runs with, as `bitexact check` works it out. */
  detectedMode(file: string | undefined): DeterministicMode {
    if (!file) return 'off';
    const { paths, facts } = this.reached(file);
    return programModeFor(facts, paths.indexOf(file));
  }

  /** A switch of the project of `file` that its default path does not run, where it stands. */
  unreachedSwitch(file: string | undefined): { file: string; line: number } | undefined {
    if (!file) return undefined;
    const { paths, facts } = this.reached(file);
    const [first] = unreachedSwitches(facts);
    return first ? { file: paths[first.file]!, line: first.setting.range.start.line + 1 } : undefined;
  }

  /** The facts of the program of `file` with the calls its reachability reads (cross-file.ts addCallEdges). */
  private reached(file: string): { paths: string[]; facts: ProgramFile[] } {
    const { paths, program } = this.deps.workspace.programOf(file);
    return { paths, facts: reachableFacts(this.reader, program) };
  }

  private queue(step: () => Promise<void>): Promise<unknown> {
    const run = async () => {
      await step();
      this.renewQuestions();
      this.deps.changed();
    };
    this.work = this.work.then(run, run);
    return this.work;
  }

  /** A file as the index holds it: the open document's text, else the file's on disk (undefined: unchecked). */
  private read(file: string): ProgramSource | undefined {
    const uri = pathToFileURL(file).href;
    const { settings } = this.deps.workspace.effectiveSettings(uri, this.deps.globalEditor());
    if (this.deps.workspace.isExcluded(file, settings)) return undefined;
    const open = this.deps.docs.get(uri);
    if (open) return this.deps.workspace.programSource(file, open.document.getText(), settings);
    if (sizeRefusal(file, settings.maxFileSize)) return undefined;
    const read = readSource(file);
    return read.ok ? this.deps.workspace.programSource(file, read.text, settings) : undefined;
  }

  /**
   * Records `sources`' facts: the project facts first (`projectWide`: aliases and compiled extensions
   * read again over every file), then each file's, its mode switches from an analysis where it may
   * hold one (with the project's context where it has one, as `bitexact check` analyses it).
   */
  private async record(sources: readonly ProgramSource[], projectWide: boolean): Promise<void> {
    const { checker, workspace } = this.deps;
    if (projectWide) {
      const fresh = new Map(sources.map((s) => [s.path, s]));
      const current = this.files.flatMap((f) => fresh.get(f) ?? workspace.sourceOf(f) ?? []);
      this.aliases = checker.projectAliases(current);
      this.compiled = checker.compiledWithWrappers(current, compiledExtensions(checker, current.map((s) => ({ absolute: s.path, text: s.text })), (absolute) => this.relativeToFolder(absolute)))!;
    }
    const pooled: ProgramSource[] = [];
    for (const [k, source] of sources.entries()) {
      const project = projectOptionFor(source, this.aliases, this.compiled);
      if (project) this.setAnalysed(source, checker.analyzeForProgram(source.text, source.settings, project));
      else if (mayHaveModeSwitch(source.text)) pooled.push(source);
      else workspace.setEntry(source.path, { source, facts: programFileOf(source, { modeSettings: [] }) });
      if (k % 50 === 49) await turn();
    }
    const jobs = pooled.map((s) => ({ text: s.text, settings: s.settings }));
    const inThreads = this.deps.analyseMany?.(jobs, { onAnalysed: (i, analysis) => this.setAnalysed(pooled[i]!, analysis), cancelled: () => false });
    if (inThreads) return void (await inThreads);
    for (const [k, source] of pooled.entries()) {
      this.setAnalysed(source, checker.analyzeForProgram(source.text, source.settings));
      if (k % 10 === 9) await turn();
    }
  }

  private setAnalysed(source: ProgramSource, analysis: FileAnalysis): void {
    this.deps.workspace.setEntry(source.path, { source, facts: programFileOf(source, analysis) });
  }

  /** A path as `bitexact check` run in its workspace folder shows it. */
  private relativeToFolder(absolute: string): string {
    const folder = this.deps.folders().find((f) => !path.relative(f, absolute).startsWith('..'));
    return folder ? path.relative(folder, absolute).split(path.sep).join('/') : absolute;
  }
}
