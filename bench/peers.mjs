// The peers the bench measures on the same files in the same run: each is either a command line for
// a directory, with its version, or absent with the reason (a peer that is absent is reported so,
// never estimated). Ruff's wasm build and pyright are devDependencies (npm ci installs them);
// pyflakes is Debian's python3-pyflakes, present only where it was installed.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { root } from './measure.mjs';

const require = createRequire(import.meta.url);

function npmPeer(name, short, label, argv) {
  let manifest;
  try {
    manifest = require.resolve(`${name}/package.json`);
  } catch {
    return { short, label, absent: `not installed: the devDependency ${name} is missing (npm ci installs it)` };
  }
  const { version } = JSON.parse(fs.readFileSync(manifest, 'utf8'));
  return { short, label: label(version), argv: (dir) => argv(path.dirname(manifest), dir) };
}

// BENCH_PYFLAKES: another pyflakes command (a pip-installed one, say) in place of Debian's.
const PYFLAKES = process.env.BENCH_PYFLAKES ?? '/usr/bin/pyflakes3';

function pyflakes() {
  const short = 'pyflakes';
  if (!fs.existsSync(PYFLAKES)) return { short, label: "pyflakes (Debian's python3-pyflakes)", absent: `not installed: no ${PYFLAKES} (apt-get install python3-pyflakes)` };
  // `pyflakes3 --version` prints e.g. "2.5.0 Python 3.11.2 on Linux".
  const [version, , python] = execFileSync(PYFLAKES, ['--version'], { encoding: 'utf8' }).trim().split(' ');
  const source = process.env.BENCH_PYFLAKES ? PYFLAKES : "Debian's python3-pyflakes";
  return { short, label: `pyflakes ${version} (${source}, Python ${python})`, argv: (dir) => [PYFLAKES, dir] };
}

export function peers() {
  return {
    ruff: npmPeer('@astral-sh/ruff-wasm-nodejs', 'Ruff', (v) => `Ruff ${v} (WebAssembly build, default rules, one thread)`, (_, dir) => [process.execPath, path.join(root, 'bench/ruff-wasm.mjs'), dir]),
    pyright: npmPeer('pyright', 'pyright', (v) => `pyright ${v} --outputjson`, (home, dir) => [process.execPath, path.join(home, 'index.js'), '--outputjson', dir]),
    pyflakes: pyflakes(),
  };
}
