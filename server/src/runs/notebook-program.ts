// A pair of a Jupyter notebook: `bitexact pair -- python3 train.ipynb` runs the notebook's code cells,
// in order, as one program, as a kernel run top to bottom runs them (the product has no kernel of its
// own, and a notebook run through nbconvert or papermill keeps its printed metrics in the notebook's
// outputs, not on stdout where `pair` reads them). The program is the source `bitexact check` reads
// (analysis/notebook.ts): the code cells joined, IPython-only lines (`%magic`, `!shell`) masked by
// blanks or `...`, so a line of the program is the same line of its cell (a traceback maps back).
// It is written into the pair directory (the evidence of what ran, and never into the workspace);
// the notebook's folder goes on PYTHONPATH, as a kernel started there finds its sibling modules.
import fs from 'node:fs';
import path from 'node:path';
import { readNotebook } from '../analysis/notebook.js';
import { isPythonInterpreter } from './versions.js';

/** Interpreter options that take a value (`-W ignore`, `-X dev`). */
const VALUED = new Set(['-W', '-X', '-Q']);

/**
 * The index of the notebook in `command` when it asks Python to run one (`python3 [-u …] nb.ipynb
 * ARGS`), else -1 (`-m`, `-c` and other programs run what they say).
 */
export function notebookArgument(command: readonly string[]): number {
  if (!isPythonInterpreter(command[0])) return -1;
  for (let i = 1; i < command.length; i++) {
    const arg = command[i]!;
    if (arg === '-m' || arg === '-c' || arg === '-') return -1;
    if (VALUED.has(arg)) {
      i++;
      continue;
    }
    if (arg.startsWith('-')) continue;
    return arg.endsWith('.ipynb') ? i : -1;
  }
  return -1;
}

export interface NotebookProgram {
  /** The notebook, absolute. */
  notebook: string;
  /** The program's text: the code cells in order, IPython-only lines masked. */
  text: string;
  /** The command with the notebook replaced by the program written into `dir`. */
  argv(dir: string): string[];
  /** PYTHONPATH for the runs: the notebook's folder first. */
  pythonPath(inherited: string | undefined): string;
}

/** The program of the notebook `command` runs, or undefined for a command that runs no notebook; throws when it cannot be read. */
export function notebookProgram(command: readonly string[], cwd: string): NotebookProgram | undefined {
  const at = notebookArgument(command);
  if (at < 0) return undefined;
  const notebook = path.resolve(cwd, command[at]!);
  let raw: string;
  try {
    raw = fs.readFileSync(notebook, 'utf8');
  } catch (error) {
    throw new Error(`cannot run the notebook ${command[at]}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  const read = readNotebook(raw);
  if (!read.ok) throw new Error(`cannot run ${command[at]}: ${read.reason}`);
  const text = `${read.notebook.text}\n`;
  return {
    notebook,
    text,
    argv: (dir) => {
      const program = path.join(dir, `${path.basename(notebook, '.ipynb')}.ipynb.py`);
      fs.writeFileSync(program, text);
      return command.map((arg, i) => (i === at ? program : arg));
    },
    pythonPath: (inherited) => [path.dirname(notebook), ...(inherited ? [inherited] : [])].join(path.delimiter),
  };
}
