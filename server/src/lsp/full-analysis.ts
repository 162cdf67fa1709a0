// An open document analysed in full (session.ts: when an edit cannot be analysed quickly, and after
// a pause in typing), in steps that stop when the document moves on (analysis-runs.ts).
import type { CancellationToken } from 'vscode-languageserver/node';
import type { Tree } from 'web-tree-sitter';
import type { Checker } from '../analysis/index.js';
import type { Settings } from '../analysis/config.js';
import type { AnalysisSteps, FileAnalysis } from '../analysis/engine.js';
import type { ProjectContext } from '../analysis/scope.js';
import type { AnalysisRuns } from './analysis-runs.js';
import type { DocumentStore, OpenDocument } from './documents.js';
import type { WorkspaceModel } from './workspace.js';

export interface FullAnalysisDeps {
  checker: Checker;
  docs: DocumentStore;
  runs: AnalysisRuns;
  workspace: WorkspaceModel;
  debug: (message: string) => void;
}

/**
 * The whole file analysed, in steps that stop when the document moves on (analysis-runs.ts); undefined
 * then. Its calls are read only when they can matter, as the CLI reads them (Checker.addCallEdges):
 * when this file or another of its project switches the mode (program.ts reachability). Reading them
 * is a query over the whole file, as long as the rest of an analysis of an edit; a switch appearing
 * later bumps the generation, and open files are analysed again.
 */
export function fullAnalysis(deps: FullAnalysisDeps, entry: OpenDocument, text: string, settings: Settings, file: string | undefined, project: ProjectContext | undefined, token?: CancellationToken): FileAnalysis | Promise<FileAnalysis | undefined> {
  const { checker, docs } = deps;
  // A project alias makes a file worth analysing that names no torch function itself.
  if (!project && !checker.mayMatch(text)) return checker.analyze(text, settings);
  const { uri, version } = entry.document;
  let tree: Tree | undefined;
  const steps = (): AnalysisSteps => {
    deps.debug(`bitexact: analysing ${uri} (version ${version}) in full`);
    tree = docs.treeOf(entry);
    return fullSteps(deps, tree, entry, text, settings, file, project);
  };
  // Stale: closed or reopened, edited, or its tree freed (documents.ts). Another file's program facts
  // (the generation) do not change this analysis, only how its hits resolve, after it.
  const stale = () => docs.get(uri) !== entry || entry.document.version !== version || entry.tree !== tree;
  const analysisSettings = JSON.stringify([settings.torchVersion, settings.guardNames, project]);
  // A large document's first parse runs in slices, dropped as the analysis would be.
  const between = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    return docs.get(uri) === entry && entry.document.version === version && !token?.isCancellationRequested;
  };
  return docs.parseLarge(entry, between).then((parsed) => (parsed ? deps.runs.analysis(uri, version, analysisSettings, steps, stale, token) : undefined));
}

function* fullSteps(deps: FullAnalysisDeps, tree: Tree, entry: OpenDocument, text: string, settings: Settings, file: string | undefined, project: ProjectContext | undefined): AnalysisSteps {
  const analysis = yield* deps.checker.analysisSteps(tree, text, settings, entry.chunks, false, project);
  const callsMatter = !file || analysis.modeSettings.length > 0 || deps.workspace.hasSwitches(file);
  return { ...analysis, calls: callsMatter ? deps.checker.callsOfTree(tree) : [] };
}
