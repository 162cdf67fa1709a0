// The pieces of a run that talk to the operating system: its process group (signals, whether any of it
// is still running) and the files its output goes to, which the child writes straight into and
// launch.ts reads back in whole lines.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

/** A partial line longer than this is handed on as it is rather than held back for its newline. */
const LONG_LINE = 65536;

export function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    if (process.platform === 'win32') spawnSync('taskkill', ['/pid', String(pid), '/T', '/F']);
    else process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone.
  }
}

/**
 * A file one of the child's output streams is written to, by the child itself; read back from where
 * the last read stopped, in whole lines.
 */
export class OutputFile {
  private offset = 0;
  private pending: Buffer = Buffer.alloc(0);

  private constructor(
    readonly path: string,
    /** The descriptor the child writes to (O_APPEND, shared by everything the child starts); -1 once closed here. */
    public writeFd: number,
    readonly readFd: number,
  ) {}

  static create(path: string): OutputFile {
    const writeFd = fs.openSync(path, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_TRUNC | fs.constants.O_APPEND);
    return new OutputFile(path, writeFd, fs.openSync(path, 'r'));
  }

  /** The complete lines that arrived since the last call; with `final`, everything. */
  take(final: boolean): Buffer {
    const size = fs.fstatSync(this.readFd).size;
    let joined = this.pending;
    if (size > this.offset) {
      const fresh = Buffer.allocUnsafe(size - this.offset);
      const n = fs.readSync(this.readFd, fresh, 0, fresh.length, this.offset);
      this.offset += n;
      joined = joined.length ? Buffer.concat([joined, fresh.subarray(0, n)]) : fresh.subarray(0, n);
    }
    let cut = joined.lastIndexOf(10) + 1;
    if (final || (cut === 0 && joined.length > LONG_LINE)) cut = joined.length;
    this.pending = joined.subarray(cut);
    return joined.subarray(0, cut);
  }

  /** Closes this process's copy of the child's descriptor (the child has its own). */
  releaseWriter(): void {
    if (this.writeFd < 0) return;
    fs.closeSync(this.writeFd);
    this.writeFd = -1;
  }

  close(remove: boolean): void {
    this.releaseWriter();
    fs.closeSync(this.readFd);
    if (remove) fs.rmSync(this.path, { force: true });
  }
}

/**
 * Whether any process of the group is still running (one that ignored its signal, or was left behind).
 * A zombie does not count: it writes nothing, and its reaper may be slow (an init that reaps late).
 */
export function groupAlive(pgid: number): boolean {
  if (process.platform === 'win32') return false;
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (process.platform !== 'linux') return true;
  try {
    for (const entry of fs.readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      let stat: string;
      try {
        stat = fs.readFileSync(`/proc/${entry}/stat`, 'latin1');
      } catch {
        continue; // gone meanwhile
      }
      // "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses, so read after the last ')'.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(pgrp) === pgid && state !== 'Z') return true;
    }
    return false;
  } catch {
    return true;
  }
}
