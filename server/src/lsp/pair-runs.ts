// Pairs run from the editor: `bitexact/runPair` runs a pair session in the server (the same engine as
// `bitexact pair`), forwards its events as `bitexact/pairEvent` notifications while it goes, and answers
// with the engine's verdict; `bitexact/cancelPair` (or cancelling the request) stops it as Ctrl-C
// would, and so it stops a pair the server follows (a terminal's: runs/pair-interrupt.ts); `bitexact/runConfigs` lists the run configurations the Runs view offers. The client gates
// launching on Workspace Trust: the command comes from the workspace.
import { Connection, ResponseError } from 'vscode-languageserver/node';
import { PAIR_CANCEL_METHOD, PAIR_EVENT_METHOD, PAIR_RUN_METHOD, PairCancelResult, PairEventParams, PairRunResult, WATCHED_PREFIX, RUN_CONFIGS_METHOD, RunConfigsResult } from '../runs/pair-events.js';
import { PairRequestError, parsePairRunParams, resolvePair } from '../runs/pair-request.js';
import { interruptPair } from '../runs/pair-interrupt.js';
import { runPairSession } from '../runs/pair-session.js';
import { ProbeUsageError } from '../runs/probe-run.js';
import { RunConfigError, findPyproject, readRunConfigs } from '../runs/run-config.js';
import { VariantUsageError } from '../runs/variants.js';

/** `finished`: the directory of a pair that ran to its report; `followed`: whether a directory is a pair the server follows. */
export function registerPairRuns(connection: Connection, finished: (dir: string) => void = () => undefined, followed: (dir: string) => boolean = () => false): void {
  const running = new Map<string, AbortController>();

  connection.onRequest(PAIR_RUN_METHOD, async (params: unknown, token): Promise<PairRunResult> => {
    let id, options;
    try {
      const request = parsePairRunParams(params);
      id = request.id;
      options = resolvePair(request.settings);
    } catch (error) {
      if (error instanceof PairRequestError || error instanceof RunConfigError || error instanceof VariantUsageError || error instanceof ProbeUsageError) throw new ResponseError(-32602, error.message);
      throw error;
    }
    if (running.has(id)) throw new ResponseError(-32602, `a pair named ${id} is running already`);
    const controller = new AbortController();
    running.set(id, controller);
    token.onCancellationRequested(() => controller.abort());
    try {
      const result = await runPairSession({
        ...options,
        signal: controller.signal,
        onEvent: (event) => {
          if (event.kind !== 'output') void connection.sendNotification(PAIR_EVENT_METHOD, { id, event } satisfies PairEventParams);
        },
      });
      if (result.dir && result.report) finished(result.dir);
      return { exitCode: result.exitCode, dir: result.dir ?? null, verdict: result.report?.verdict ?? null, headline: result.report?.headline ?? null };
    } finally {
      running.delete(id);
    }
  });

  connection.onRequest(PAIR_CANCEL_METHOD, (params: { id?: unknown }): PairCancelResult => {
    const id = typeof params?.id === 'string' ? params.id : undefined;
    const dir = id?.startsWith(WATCHED_PREFIX) ? id.slice(WATCHED_PREFIX.length) : undefined;
    if (dir !== undefined) {
      if (!followed(dir)) return { cancelled: false, why: 'the server does not follow that pair (it is over, or not in this workspace)' };
      const outcome = interruptPair(dir);
      return outcome.interrupted ? { cancelled: true } : { cancelled: false, why: outcome.why };
    }
    const controller = id !== undefined ? running.get(id) : undefined;
    controller?.abort();
    return { cancelled: controller !== undefined };
  });

  // The Runs view lists these and launches one by name (runConfig).
  connection.onRequest(RUN_CONFIGS_METHOD, (params: { cwd?: unknown }): RunConfigsResult => {
    if (typeof params?.cwd !== 'string') throw new ResponseError(-32602, 'cwd: expected a path');
    const file = findPyproject(params.cwd);
    if (!file) return { file: null, configs: [] };
    try {
      const configs = readRunConfigs(file).map((entry) => {
        if ('error' in entry) return entry;
        const { name, command, cwd, runs, variants } = entry.config;
        return { name, command, cwd, ...(runs !== undefined ? { runs } : {}), ...(variants ? { variants } : {}) };
      });
      return { file, configs };
    } catch (error) {
      if (error instanceof RunConfigError) return { file, configs: [], error: error.message };
      throw error;
    }
  });
}
