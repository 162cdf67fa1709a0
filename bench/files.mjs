// The bench's file walk: *.py under a directory, skipping the folders `bitexact check` skips.
import fs from 'node:fs';
import path from 'node:path';

const SKIPPED = new Set(['.git', '.hg', '.svn', '__pycache__', 'node_modules', '.venv', 'venv', '.tox', '.nox', '.mypy_cache', '.ruff_cache', '.pytest_cache', 'site-packages']);

export function listPythonFiles(dir) {
  const out = [];
  const walk = (d) => {
    for (const entry of fs.readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const full = path.join(d, entry.name);
      if (entry.isDirectory() && !SKIPPED.has(entry.name)) walk(full);
      else if (entry.isFile() && (entry.name.endsWith('.py') || entry.name.endsWith('.pyi'))) out.push(full);
    }
  };
  walk(dir);
  return out;
}
