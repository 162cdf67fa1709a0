// A real LSP client over stdio (vscode-languageserver-protocol) talking to `bitexact lsp --stdio`.
import { ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import {
  ClientCapabilities,
  createProtocolConnection,
  InitializeRequest,
  InitializedNotification,
  ProtocolConnection,
  PublishDiagnosticsParams,
  PublishDiagnosticsNotification,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-languageserver-protocol/node';
import { ROOT } from './checker.js';

export interface LspSession {
  connection: ProtocolConnection;
  process: ChildProcess;
  published: PublishDiagnosticsParams[];
  /** Resolves with the next publishDiagnostics for `uri` that satisfies `accept`. */
  nextPublish(uri: string, accept?: (p: PublishDiagnosticsParams) => boolean): Promise<PublishDiagnosticsParams>;
  close(): Promise<void>;
}

export interface StartOptions {
  /** More initializationOptions: what the client says it can do, as the VS Code client's pairRunWithFix. */
  initialization?: Record<string, unknown>;
  /** The node arguments that start the server (the bundled `bitexact lsp --stdio` unless given). */
  server?: string[];
  /** More environment variables for the server process (BITEXACT_THREADS=1: no worker threads). */
  env?: Record<string, string>;
}

export async function startLsp(rootDir: string, capabilities: ClientCapabilities, settings: Record<string, unknown> = {}, options: StartOptions = {}): Promise<LspSession> {
  const server = options.server ?? [path.join(ROOT, 'bin/bitexact.cjs'), 'lsp', '--stdio'];
  const child = spawn(process.execPath, server, { cwd: rootDir, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, ...options.env } });
  const connection = createProtocolConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  const published: PublishDiagnosticsParams[] = [];
  const waiters: Array<{ uri: string; accept: (p: PublishDiagnosticsParams) => boolean; resolve: (p: PublishDiagnosticsParams) => void }> = [];
  connection.onNotification(PublishDiagnosticsNotification.type, (params) => {
    published.push(params);
    const i = waiters.findIndex((w) => w.uri === params.uri && w.accept(params));
    if (i >= 0) waiters.splice(i, 1)[0]!.resolve(params);
  });
  connection.onRequest('window/workDoneProgress/create', () => null);
  connection.onRequest('workspace/diagnostic/refresh', () => null);
  connection.listen();
  await connection.sendRequest(InitializeRequest.type, {
    processId: process.pid,
    rootUri: null,
    workspaceFolders: [{ uri: `file://${rootDir}`, name: 'ws' }],
    capabilities,
    initializationOptions: { ...options.initialization, settings },
  });
  await connection.sendNotification(InitializedNotification.type, {});
  return {
    connection,
    process: child,
    published,
    nextPublish: (uri, accept = () => true) =>
      new Promise((resolve) => {
        const already = published.find((p) => p.uri === uri && accept(p));
        if (already) resolve(already);
        else waiters.push({ uri, accept, resolve });
      }),
    close: async () => {
      await connection.sendRequest('shutdown');
      await connection.sendNotification('exit');
      connection.dispose();
      child.kill();
    },
  };
}
