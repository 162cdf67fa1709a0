// workspace/executeCommand: check the whole workspace, show the configuration in effect for a file, or
// place a probed pair's divergence (requests/pair-divergence.ts).
import { CancellationToken, ExecuteCommandParams, ResponseError } from 'vscode-languageserver/node';
import { effectiveMode } from '../../analysis/index.js';
import { formatTorchVersion } from '../../analysis/version.js';
import { SHOW_PAIR_DIVERGENCE_COMMAND } from '../../runs/pair-divergence-wire.js';
import type { Session } from '../session.js';
import { uriToPath } from '../workspace.js';
import { showPairDivergence } from './pair-divergence.js';

export const CHECK_WORKSPACE_COMMAND = 'bitexact.server.checkWorkspace';
export const SHOW_CONFIGURATION_COMMAND = 'bitexact.server.showConfiguration';
export const SERVER_COMMANDS = [CHECK_WORKSPACE_COMMAND, SHOW_CONFIGURATION_COMMAND, SHOW_PAIR_DIVERGENCE_COMMAND] as const;

export async function executeCommand(session: Session, params: ExecuteCommandParams, token: CancellationToken): Promise<unknown> {
  if (params.command === SHOW_CONFIGURATION_COMMAND) {
    const uri = String(params.arguments?.[0] ?? '');
    const editor = await session.editorSettings(uri);
    const effective = session.workspace.effectiveSettings(uri, editor);
    const mode = effectiveMode(effective.settings, session.index.detectedMode(uriToPath(uri)));
    return { uri, settings: { ...effective.settings, torchVersion: formatTorchVersion(effective.settings.torchVersion) }, deterministicModeInEffect: mode, sources: effective.sources, problems: effective.problems };
  }
  if (params.command === CHECK_WORKSPACE_COMMAND) return session.scans.checkWorkspace(token);
  if (params.command === SHOW_PAIR_DIVERGENCE_COMMAND) return showPairDivergence(session, params.arguments);
  throw new ResponseError(-32602, `unknown command ${params.command}`);
}
