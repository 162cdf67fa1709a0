// Writes the files bitexact reads (Python, notebooks, project markers) of one commit of a mirrored
// git repository into a folder. Mirrors from the search tool's `fetch` may lack their largest
// blobs, so `git archive` fails on them; blobs are streamed with `git cat-file --batch` instead and
// missing ones are skipped (they are data files, never Python).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

// C/C++/CUDA sources too: `bitexact check` reads a compiled extension's sources when a Python file
// imports the module (workspace/extension-sources.ts).
const WANTED = /(\.pyi?|\.ipynb|\.(cu|cuh|cpp|cc|cxx|c|h|hpp|hxx|inl)|(^|\/)pyproject\.toml|(^|\/)setup\.cfg|(^|\/)\.gitignore)$/;

/** Lists `path -> blob sha` of the files bitexact reads at `commit`. */
function listFiles(gitDir, commit) {
  const out = spawnSync('git', ['--git-dir', gitDir, 'ls-tree', '-r', '-z', commit], { maxBuffer: 1 << 28 });
  if (out.status !== 0) throw new Error(`git ls-tree ${commit} in ${gitDir}: ${out.stderr.toString().trim()}`);
  const files = [];
  for (const entry of out.stdout.toString('utf8').split('\0')) {
    const m = /^\d+ blob ([0-9a-f]+)\t(.*)$/s.exec(entry);
    if (m && WANTED.test(m[2])) files.push({ sha: m[1], path: m[2] });
  }
  return files;
}

/** Streams the blobs through one `git cat-file --batch` and writes each under `dest`. */
function writeBlobs(gitDir, files, dest) {
  return new Promise((resolve, reject) => {
    const git = spawn('git', ['--git-dir', gitDir, 'cat-file', '--batch'], { stdio: ['pipe', 'pipe', 'inherit'] });
    let buf = Buffer.alloc(0);
    let next = 0;
    let missing = 0;
    git.stdout.on('data', (chunk) => {
      buf = buf.length ? Buffer.concat([buf, chunk]) : chunk;
      for (;;) {
        const nl = buf.indexOf(10);
        if (nl < 0) return;
        const header = buf.subarray(0, nl).toString();
        if (header.endsWith(' missing')) {
          missing++;
          next++;
          buf = buf.subarray(nl + 1);
          continue;
        }
        const size = Number(header.split(' ')[2]);
        if (buf.length < nl + 1 + size + 1) return;
        const file = files[next++];
        const target = path.join(dest, file.path);
        fs.mkdirSync(path.dirname(target), { recursive: true });
        fs.writeFileSync(target, buf.subarray(nl + 1, nl + 1 + size));
        buf = buf.subarray(nl + 1 + size + 1);
      }
    });
    git.on('error', reject);
    git.on('close', (code) => (code === 0 ? resolve({ written: next - missing, missing }) : reject(new Error(`git cat-file exited ${code}`))));
    git.stdin.end(files.map((f) => f.sha).join('\n') + '\n');
  });
}

/**
 * Materialises `commit` of the mirror at `gitDir` into `dest` once (a `.bitexact-truth-complete`
 * marker makes later calls free) and returns the folder.
 */
export async function materialise(gitDir, commit, dest) {
  const marker = path.join(dest, '.bitexact-truth-complete');
  // A checkout made with another file selection is made again.
  if (fs.existsSync(marker) && JSON.parse(fs.readFileSync(marker, 'utf8')).wanted === WANTED.source) return dest;
  fs.rmSync(dest, { recursive: true, force: true });
  fs.mkdirSync(dest, { recursive: true });
  const files = listFiles(gitDir, commit);
  // The checkout is a project root for bitexact, as the user's clone would be.
  fs.mkdirSync(path.join(dest, '.git'), { recursive: true });
  const { missing } = await writeBlobs(gitDir, files, dest);
  fs.writeFileSync(marker, JSON.stringify({ commit, files: files.length, missing, wanted: WANTED.source }) + '\n');
  return dest;
}
