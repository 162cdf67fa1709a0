// The terminal line the extension builds for `bitexact pair`/`compare`, run through a real POSIX shell.
import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { quoteArgument, shellLine } from '../../client/src/shell-line.js';

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

  it('leaves the training command to the shell, as if typed', () => {
    const line = shellLine('/opt/my node/node', ['/ext dir/dist/cli.cjs', 'pair', '--runs', '2'], 'posix', 'python3 train.py --name "run one"');
    expect(line).toBe(`'/opt/my node/node' '/ext dir/dist/cli.cjs' pair --runs 2 -- python3 train.py --name "run one"`);
    expect(argvThroughShell(line.replace(/^'\/opt\/my node\/node'/, 'printf-args'))).toEqual(['/ext dir/dist/cli.cjs', 'pair', '--runs', '2', '--', 'python3', 'train.py', '--name', 'run one']);
    expect(shellLine("C:\\Program Files\\node.exe", ["C:\\it's\\cli.cjs", 'compare'], 'powershell')).toBe(`& 'C:\\Program Files\\node.exe' 'C:\\it''s\\cli.cjs' compare`);
  });
});
