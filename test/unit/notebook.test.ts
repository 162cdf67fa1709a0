// The notebook reader: masking keeps every position, cells map back, writing keeps the file's shape.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cellAt, maskIPython, readNotebook, toCellRange, writeNotebook } from '../../server/src/analysis/notebook.js';

function notebook(cells: Array<[string, string | string[]]>): string {
  return JSON.stringify({ cells: cells.map(([cell_type, source]) => ({ cell_type, metadata: {}, source })), metadata: { language_info: { name: 'python' } }, nbformat: 4, nbformat_minor: 5 });
}

describe('notebooks', () => {
  it('masks IPython lines with text of the same length, line by line', () => {
    const line = fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('%time f()', '!ls -la', '  !pip install x', 'out = !ls', 'a, b = %sx ls', '%%bash', '%%time', 'x = 1 % 2'));
    fc.assert(
      fc.property(fc.array(line, { maxLength: 12 }), (lines) => {
        const source = lines.map((l) => l.replace(/\n/g, '')).join('\n');
        const masked = maskIPython(source);
        expect(masked.split('\n').map((l) => l.length)).toEqual(source.split('\n').map((l) => l.length));
      }),
    );
  });

  it('keeps Python, masks magics and shell lines, and blanks non-Python cell magics whole', () => {
    expect(maskIPython('x = 1 % 2\n%matplotlib inline\n    !nvidia-smi\nfiles = !ls')).toBe('x = 1 % 2\n...               \n    ...        \n...        ');
    expect(maskIPython('%%bash\n  echo hi')).toBe('      \n         ');
    expect(maskIPython('%%time\nf()')).toBe('...   \nf()');
  });

  it("masks a shell line's continuations, help lines and automagic, and leaves Python that looks alike", () => {
    // Shell and magic lines go on after a trailing backslash; the continuation is blanked whole, as
    // an indented `...` would be a statement of its own.
    const masked = (source: string, kept: (line: string, i: number) => string) => source.split('\n').map(kept).join('\n');
    const dots = (l: string) => l.replace(/\S.*$/, (rest) => '...'.padEnd(rest.length));
    const spaces = (l: string) => ' '.repeat(l.length);
    const shell = '!python prep.py \\\n  --out data \\\n  --n 2\nx = 1';
    expect(maskIPython(shell)).toBe(masked(shell, (l, i) => (i === 0 ? dots(l) : i < 3 ? spaces(l) : l)));
    const magic = '%run -i s.py \\\n a=1\nb = 2 \\\n  + 3';
    expect(maskIPython(magic)).toBe(masked(magic, (l, i) => (i === 0 ? dots(l) : i === 1 ? spaces(l) : l)));
    const help = 'fn?\n??np.add\nif q:  # why?\n  pass';
    expect(maskIPython(help)).toBe(masked(help, (l, i) => (i < 2 ? dots(l) : l)));
    const automagic = 'pip install peft\ncd ms-swift\nls ./out/\npip = 3\ncd.x()\nls[0]';
    expect(maskIPython(automagic)).toBe(masked(automagic, (l, i) => (i < 3 ? dots(l) : l)));
  });

  it('joins code cells and maps ranges back to 1-based cells with relative lines', () => {
    const read = readNotebook(notebook([['markdown', '# t'], ['code', 'import torch\nx = 1\n'], ['raw', 'r'], ['code', ['y = 2\n', 'z = 3']]]));
    if (!read.ok) throw new Error(read.reason);
    const nb = read.notebook;
    expect(nb.text).toBe('import torch\nx = 1\n\ny = 2\nz = 3');
    expect(nb.cells.map((c) => [c.cell, c.firstLine, c.lineCount])).toEqual([[2, 0, 3], [4, 3, 2]]);
    expect(cellAt(nb, 4)?.cell).toBe(4);
    expect(toCellRange(nb, { start: { line: 4, column: 0 }, end: { line: 4, column: 5 } })).toMatchObject({ cell: { cell: 4 }, range: { start: { line: 1, column: 0 }, end: { line: 1, column: 5 } } });
  });

  it('refuses what is not a Python notebook, with a reason', () => {
    expect(readNotebook('[1, 2]')).toMatchObject({ ok: false, reason: expect.stringContaining('no `cells` list') });
    expect(readNotebook('{')).toMatchObject({ ok: false, reason: expect.stringContaining('invalid JSON') });
    expect(readNotebook(JSON.stringify({ cells: [], metadata: { kernelspec: { language: 'julia' } } }))).toMatchObject({ ok: false, reason: expect.stringContaining('julia') });
  });

  it('writes sources as lists of lines with a one-space indent, other fields untouched', () => {
    const json = { cells: [{ cell_type: 'code', source: 'a', outputs: [{ x: 1 }] }], metadata: { k: 'é' } };
    const written = writeNotebook(json, new Map([[0, 'b = 1\nc = 2\n']]));
    expect(JSON.parse(written)).toEqual({ cells: [{ cell_type: 'code', source: ['b = 1\n', 'c = 2\n'], outputs: [{ x: 1 }] }], metadata: { k: 'é' } });
    expect(written.startsWith('{\n "cells"')).toBe(true);
    expect(json.cells[0]!.source).toBe('a');
  });
});
