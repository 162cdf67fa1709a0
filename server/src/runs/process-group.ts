// The pieces of a run that talk to the operating system: its processes (signals, whether any of them
// is still running), the supervisor that stops them if bitexact dies, and the files its output goes
// to, which the child writes straight into and launch-run.ts reads back in whole lines.
//
// A run's processes are its process group (spawn detached) and, on Linux, every process whose
// environment holds the run's token (RUN_TOKEN_ENV): a descendant that left the group (setsid, a
// daemon) keeps the environment it inherited, and so is found however it was reparented.
import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
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

/** Set in each run's environment, so its descendants can be found wherever they went (see above). */
export const RUN_TOKEN_ENV = 'BITEXACT_RUN_TOKEN';

export function newRunToken(): string {
  return crypto.randomBytes(8).toString('hex');
}

/** One run's processes: its group and the processes holding its token. */
export interface RunProcesses {
  pgid: number;
  token: string;
}

/** Signals the run's group and every process outside it that holds the run's token. */
export function signalRun(run: RunProcesses, signal: NodeJS.Signals): void {
  killGroup(run.pgid, signal);
  for (const pid of scanProcesses(run).tagged) {
    try {
      process.kill(pid, signal);
    } catch {
      // gone meanwhile
    }
  }
}

/**
 * Whether any process of the run is still running (one that ignored its signal, or was left behind).
 * A zombie does not count: it writes nothing, and its reaper may be slow (an init that reaps late).
 */
export function runAlive(run: RunProcesses): boolean {
  if (process.platform === 'win32') return false;
  try {
    process.kill(-run.pgid, 0);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EPERM') return true;
    return process.platform === 'linux' && scanProcesses(run).tagged.length > 0;
  }
  if (process.platform !== 'linux') return true;
  const { inGroup, tagged } = scanProcesses(run);
  return inGroup || tagged.length > 0;
}

/** Linux /proc: whether a live process is in the run's group, and the live ones outside it that hold its token. */
function scanProcesses(run: RunProcesses): { inGroup: boolean; tagged: number[] } {
  const out = { inGroup: false, tagged: [] as number[] };
  if (process.platform !== 'linux') return out;
  const needle = Buffer.from(`\0${RUN_TOKEN_ENV}=${run.token}\0`);
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc');
  } catch {
    return { inGroup: true, tagged: [] }; // cannot tell: assume the worst for waiting, kill the group only
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'latin1');
    } catch {
      continue; // gone meanwhile
    }
    // "pid (comm) state ppid pgrp …"; comm may hold spaces and parentheses, so read after the last ')'.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (state === 'Z') continue;
    if (Number(pgrp) === run.pgid) {
      out.inGroup = true;
      continue;
    }
    let environ: Buffer;
    try {
      environ = fs.readFileSync(`/proc/${entry}/environ`);
    } catch {
      continue; // another user's process, or gone
    }
    // The first variable has no NUL before it.
    if (environ.includes(needle) || environ.subarray(0, needle.length - 1).equals(needle.subarray(1))) out.tagged.push(Number(entry));
  }
  return out;
}

/**
 * The supervisor's program: it waits on a pipe from bitexact; a line means the run is over and it
 * leaves; the end of the pipe without one means bitexact died (SIGKILL, a crash), and it kills the
 * run's group and the processes holding its token. Self-contained (run with `node -e`).
 */
const SUPERVISOR = `
const [pgid, token] = process.argv.slice(1);
let told = false;
process.stdin.on('data', () => (told = true));
process.stdin.on('end', () => {
  if (told) return;
  try { process.kill(-Number(pgid), 'SIGKILL'); } catch {}
  const fs = require('fs');
  const needle = Buffer.from('\\0${RUN_TOKEN_ENV}=' + token + '\\0');
  let entries = [];
  try { entries = fs.readdirSync('/proc'); } catch {}
  for (const entry of entries) {
    if (!/^\\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const environ = fs.readFileSync('/proc/' + entry + '/environ');
      if (environ.includes(needle) || environ.subarray(0, needle.length - 1).equals(needle.subarray(1))) process.kill(Number(entry), 'SIGKILL');
    } catch {}
  }
});
process.stdin.resume();
`;

/**
 * Starts the supervisor of a run (see SUPERVISOR): a Node process in a session of its own, so neither
 * a Ctrl-C in the terminal nor a kill of bitexact's group reaches it. Call `release` once the run has
 * ended (its processes stopped): the supervisor then leaves without killing anything.
 */
export function superviseRun(run: RunProcesses): { release: () => void } {
  if (process.platform === 'win32') return { release: () => undefined };
  let supervisor: ChildProcess;
  try {
    supervisor = spawn(process.execPath, ['-e', SUPERVISOR, String(run.pgid), run.token], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
  } catch {
    return { release: () => undefined }; // cannot start one: bitexact still stops its runs while it lives
  }
  supervisor.on('error', () => undefined);
  supervisor.stdin!.on('error', () => undefined);
  supervisor.unref();
  return {
    release: () => {
      supervisor.stdin!.end('done\n');
      (supervisor.stdin as unknown as { unref?: () => void }).unref?.();
    },
  };
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

