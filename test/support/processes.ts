// Process checks shared by the run tests.
import { spawnSync } from 'node:child_process';

/** Whether a process is alive; a zombie waiting for a reaper is dead for our purposes. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).stdout.trim();
  return stat !== '' && !stat.startsWith('Z');
}
