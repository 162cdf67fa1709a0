// The analysis core's public face, shared by the CLI and the language server so both report the
// same findings for the same text and settings.
import type { ChunkCache } from './chunk-cache.js';
import type { Settings } from './config.js';
import { Analyzer, AnalysisSteps, FileAnalysis } from './engine.js';
import type { ModeSetting } from './facts.js';
import { showsTraining } from './autograd.js';
import { addCallEdges, addCompiledModels, crossFilePasses, programFileOf, programViewFor, programWideView, ProgramQuestions, ProgramReader, projectOptionFor, SourceFile } from './cross-file.js';
import { CallEdge, ProgramView, programMode, programTrains } from './program.js';
import type { Tree } from 'web-tree-sitter';
import { GrammarFiles, PythonParser, TextChange } from './parse.js';
import { finish } from './parts.js';
import { projectAliases } from './project-aliases.js';
import type { CompiledAtomic } from './compiled-extensions.js';
import { withCompiledWrappers } from './compiled-wrappers.js';
import { ResolveMemo, resolveFindings } from './resolve.js';
import { RULES } from './rules/index.js';
import type { Rule } from './rules/rule.js';
import type { ProjectContext } from './scope.js';
import type { DeterministicMode, Finding } from './types.js';

export type { SourceFile };

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
  analysisSteps(tree: Tree, text: string, settings: Settings, cache?: ChunkCache, callEdges = true, project?: ProjectContext): AnalysisSteps {
    return this.analyzer.analysisSteps(tree, text, { torchVersion: settings.torchVersion, guardNames: settings.guardNames, ...(callEdges ? {} : { callEdges }), ...(project ? { project } : {}) }, cache);
  }

  /** The unconditional calls of a parsed file (program.ts). */
  callsOfTree(tree: Tree): CallEdge[] {
    return this.analyzer.callsOfTree(tree);
  }

  /**
   * The analysis after `edits` (since the last analyzeTree with `cache`) when they stay inside one
   * function that can be analysed alone, without parsing the file; else undefined.
   */
  analyzeEdit(text: string, edits: readonly TextChange[], settings: Settings, cache: ChunkCache, project?: ProjectContext): FileAnalysis | undefined {
    return this.analyzer.analyzeEdit(text, edits, { torchVersion: settings.torchVersion, guardNames: settings.guardNames, ...(project ? { project } : {}) }, cache);
  }

  /** The per-file half of checkProgram: what a worker thread computes for one file (`project`: its project context, when it has one). */
  analyzeForProgram(text: string, settings: Pick<Settings, 'torchVersion' | 'guardNames'>, project?: ProjectContext): FileAnalysis {
    return this.analyzer.analyzeText(text, { torchVersion: settings.torchVersion, guardNames: settings.guardNames, callEdges: false, ...(project ? { project } : {}) });
  }

  /** Does a text compile a whole model by default (compiled-models.ts)? For a file that is its own program (program.ts loneFileView). */
  compilesWholeModel(text: string): boolean {
    return text.includes('.compile') && this.analyzer.compilesWholeModel(text);
  }

  /** What the cross-file passes read of a program's files, memoised per SourceFile (cross-file.ts). */
  reader(): ProgramReader {
    return new ProgramReader(this.analyzer);
  }

  /** With a `memo` kept per document, unchanged candidates give the same Finding objects as last time. */
  resolve(analysis: FileAnalysis, text: string, settings: Settings, program: ProgramView, offPath: boolean, memo?: ResolveMemo): Finding[] {
    return resolveFindings(analysis, text, { settings, mode: effectiveMode(settings, program.mode), programTrains: program.trains, ...(program.compiles ? { compiled: program.compiles } : {}), programUnseeded: program.unseeded === true, rules: this.rules, offPath }, memo);
  }

  /** The project names for torch functions that `files` define (project-aliases.ts), for checkProgram. */
  projectAliases(files: readonly SourceFile[]): ReadonlyMap<string, string> {
    const finals = new Set(this.analyzer.rules.flatMap((r) => (r.calls ?? []).map((c) => c.slice(c.lastIndexOf('.') + 1))));
    return projectAliases(files, (text) => this.parser.parse(text), finals);
  }

  /** `compiled` with the project's own Python names for its compiled ops (compiled-wrappers.ts). */
  compiledWithWrappers(files: readonly SourceFile[], compiled?: ReadonlyMap<string, CompiledAtomic>): ReadonlyMap<string, CompiledAtomic> | undefined {
    return compiled?.size ? withCompiledWrappers(files, (text) => this.parser.parse(text), compiled) : compiled;
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
    compiled = this.compiledWithWrappers(modules, compiled);
    for (const indices of groups.values()) {
      const checked = this.checkProgram(indices.map((i) => files[i]!), analysed, aliases, modules, compiled);
      indices.forEach((fileIndex, k) => (results[fileIndex] = checked[k]!));
    }
    return results;
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
    // The files that import one are analysed again with them: most programs have none.
    const projectAliases = aliases ?? this.projectAliases(kept);
    // Called alone (not through checkPrograms): the project's names for its compiled ops are read here.
    if (!launchers) compiled = this.compiledWithWrappers(kept, compiled);
    if (projectAliases.size > 0 || compiled?.size) {
      kept.forEach((file, i) => {
        const project = projectOptionFor(file, projectAliases, compiled);
        if (project) analyses[i] = this.analyzeForProgram(file.text, file.settings, project);
      });
    }
    const program = analyses.map((a, i) => programFileOf(kept[i]!, a));
    const reader = this.reader();
    addCallEdges(reader, program, kept);
    addCompiledModels(reader, program, kept);
    const finished = crossFilePasses(new ProgramQuestions(reader, kept, launchers ?? kept), new Map(analyses.entries()));
    finished.forEach((analysis, i) => (analyses[i] = analysis));
    const wide = programWideView(program);
    const checked = new Map(kept.map((file, i) => [file, {
      path: file.path,
      findings: this.resolve(analyses[i]!, file.text, file.settings, programViewFor(program, i, wide), file.offPath),
      syntaxErrors: analyses[i]!.syntaxErrors,
      ...(analyses[i]!.ruleErrors ? { ruleErrors: analyses[i]!.ruleErrors } : {}),
    }]));
    return files.map((file) => checked.get(file) ?? { path: file.path, findings: [], syntaxErrors: [] });
  }
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
