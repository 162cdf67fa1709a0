// The terminal line the extension builds for `bitexact compare`, and the split of a command typed in
// the Runs view, both against a real POSIX shell.
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quoteArgument, shellLine, splitCommandLine } from '../../client/src/shell-line.js';

/** What `sh` hands a program for this line: each argv entry on a NUL-terminated record. */
function argvThroughShell(line: string): string[] {
  const out = execFileSync('sh', ['-c', `${line.replace(/^printf-args/, "printf '%s\\0'")}`], { encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

describe('shell lines for the terminal', () => {
  it('passes bitexact its own arguments unchanged, whatever they contain', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ minLength: 1, maxLength: 12 }).filter((s) => !s.includes('\0')), { minLength: 1, maxLength: 5 }), (args) => {
        const line = `printf-args ${args.map((a) => quoteArgument(a, 'posix')).join(' ')}`;
        expect(argvThroughShell(line)).toEqual(args);
      }),
      { numRuns: 200, seed: 3 },
    );
  });

  it('quotes the program and its arguments for each shell', () => {
    const line = shellLine('/opt/my node/node', ['/ext dir/dist/cli.cjs', 'compare', 'a b'], 'posix');
    expect(line).toBe(`'/opt/my node/node' '/ext dir/dist/cli.cjs' compare 'a b'`);
    expect(shellLine("C:\\Program Files\\node.exe", ["C:\\it's\\cli.cjs", 'compare'], 'powershell')).toBe(`& 'C:\\Program Files\\node.exe' 'C:\\it''s\\cli.cjs' compare`);
  });
});

describe('a command typed in the Runs view, split without a shell', () => {
  // Words made of plain characters, blanks, quotes and backslashes, each quoted one of three ways.
  const piece = fc.constantFrom('a', 'Z', '0', '-', '=', '.', '/', ' ', "'", '"', '\\', '*', '[', 'é', '#', '~');
  const word = fc.tuple(fc.array(piece, { minLength: 1, maxLength: 6 }).map((p) => p.join('')), fc.constantFrom('single', 'double', 'backslash'));
  const written = ([text, how]: [string, string]) =>
    how === 'single' ? `'${text.replaceAll("'", `'\\''`)}'` : how === 'double' ? `"${text.replace(/["\\$`]/g, (c) => `\\${c}`)}"` : text.replace(/[^\w]/g, (c) => `\\${c}`);

  it('gives the arguments sh gives the program, however each is quoted', () => {
    fc.assert(
      fc.property(fc.array(word, { minLength: 1, maxLength: 5 }), (words) => {
        const args = words.map(written).join(' ');
        expect(splitCommandLine(`prog ${args}`)).toEqual({ argv: ['prog', ...argvThroughShell(`printf-args ${args}`)], env: {} });
      }),
      { numRuns: 150, seed: 11 },
    );
  });

  it('takes leading KEY=VALUE words as the environment, as sh does, and refuses what needs a shell', () => {
    expect(splitCommandLine('CUBLAS_WORKSPACE_CONFIG=:4096:8 X="a b" python3 train.py --lr=0.1 --dims [64,64] # note')).toEqual({
      argv: ['python3', 'train.py', '--lr=0.1', '--dims', '[64,64]'],
      env: { CUBLAS_WORKSPACE_CONFIG: ':4096:8', X: 'a b' },
    });
    // A quoted name is no assignment (sh runs a program called 'X=1').
    expect(splitCommandLine("'X=1' python3")).toEqual({ argv: ['X=1', 'python3'], env: {} });
    expect(splitCommandLine('python3 "it\'s" \'"q"\' ""')).toEqual({ argv: ['python3', "it's", '"q"', ''], env: {} });
    for (const [line, why] of [
      ['python3 train.py | tee log', /`\|` needs one/],
      ['python3 train.py > log', /`>` needs one/],
      ['cd src && python3 train.py', /`&` needs one/],
      ['python3 train.py --seed $SEED', /`\$` needs one/],
      ['python3 "$HOME/x"', /no \$ or ` expansion/],
      ["python3 'x", /single quote is not closed/],
      ['python3 "x', /double quote is not closed/],
      ['X=1', /no command/],
      ['   ', /no command/],
    ] as const) {
      const split = splitCommandLine(line);
      expect('error' in split && split.error, line).toMatch(why);
    }
  });
});
