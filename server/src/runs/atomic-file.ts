// Files of a pair directory that other processes read while the pair runs (the Runs tree, the
// server following terminal pairs, `compare`): written to a file of this process and renamed into
// place, so a reader sees the old file or the new one, never half of one.
import fs from 'node:fs';

/** `tmp`: where the text goes first (one per writer when several processes may write `file`). */
export function writeFileAtomic(file: string, text: string, tmp = `${file}.tmp`): void {
  try {
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
  } catch (error) {
    fs.rmSync(tmp, { force: true }); // no half-written file left behind
    throw error;
  }
}
