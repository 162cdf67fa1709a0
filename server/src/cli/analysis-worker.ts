// A worker thread of cli/analysis-pool.ts: its own parser and rules, analysing the files it is sent
// (the per-file half of Checker.checkProgram) and posting the analyses back as plain data.
import { parentPort } from 'node:worker_threads';
import { Checker } from '../analysis/index.js';
import { toPortable } from '../analysis/portable.js';
import { bundledGrammar } from './grammar.js';
import type { AnalysisJob, WorkerReply, WorkerRequest } from './analysis-pool.js';

async function serve(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('analysis-worker runs as a worker thread');
  const checker = await Checker.create(bundledGrammar());
  port.on('message', ({ batch, jobs }: WorkerRequest) => {
    let reply: WorkerReply;
    try {
      reply = { batch, analyses: jobs.map((job: AnalysisJob) => toPortable(job.calls ? checker.analyze(job.text, job.settings) : checker.analyzeForProgram(job.text, job.settings))) };
    } catch (error) {
      reply = { batch, error: error instanceof Error ? (error.stack ?? error.message) : String(error) };
    }
    port.postMessage(reply);
  });
  port.postMessage({ ready: true });
}

void serve();
