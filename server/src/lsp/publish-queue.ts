// Push mode's publishes, coalesced (issue 10 item 9). vscode-jsonrpc handles one message per turn of
// the event loop, so publishing "on the next turn" analysed and published after every keystroke of a
// burst: 10,000 edits gave 10,001 publishes and a hover waited behind all of them. A change now
// starts a short wait, as long as the last analysis took (at least MIN_DELAY_MS), and every change
// that arrives meanwhile joins that one publish; a change during the analysis schedules one more.
import { performance } from 'node:perf_hooks';

const MIN_DELAY_MS = 50;
const MAX_DELAY_MS = 1000;

export class PublishQueue {
  private readonly due = new Map<string, NodeJS.Timeout>();
  private readonly running = new Set<string>();
  private readonly again = new Set<string>();
  private lastMs = 0;

  constructor(private readonly publish: (uri: string) => Promise<void>) {}

  schedule(uri: string): void {
    if (this.running.has(uri)) this.again.add(uri);
    else if (!this.due.has(uri)) this.due.set(uri, setTimeout(() => void this.run(uri), Math.min(MAX_DELAY_MS, Math.max(MIN_DELAY_MS, this.lastMs))));
  }

  /** A publish is waiting or under way: the document is being typed into. */
  isPending(uri: string): boolean {
    return this.due.has(uri) || this.running.has(uri);
  }

  /** The document closed: nothing more is published for it. */
  forget(uri: string): void {
    clearTimeout(this.due.get(uri));
    this.due.delete(uri);
    this.again.delete(uri);
  }

  private async run(uri: string): Promise<void> {
    this.due.delete(uri);
    this.running.add(uri);
    const start = performance.now();
    try {
      await this.publish(uri);
    } finally {
      this.lastMs = performance.now() - start;
      this.running.delete(uri);
      if (this.again.delete(uri)) this.schedule(uri);
    }
  }
}
