// Which files are off the training path: tests, benchmarks, docs, build scripts, and backends for
// accelerators other than CUDA GPUs. Their findings
// are reported at most as info by default (`test-code` in [tool.bitexact]), and their mode switches
// never turn the mode on for the program: a user checking a repository wants the code they train
// with first (docs/real-code.md).
import picomatch from 'picomatch';

export type TestCodePolicy = 'report' | 'info' | 'skip';

/** Paths relative to the project root. */
const OFF_PATH_GLOBS = [
  '**/test_*.py',
  '**/*_test.py',
  '**/conftest.py',
  '**/test/**',
  '**/tests/**',
  '**/testing/**',
  '**/benchmark/**',
  '**/benchmarks/**',
  '**/bench/**',
  '**/docs/**',
  '**/build/**',
  '**/setup.py',
  // Backends for other accelerators (Ascend NPUs): bitexact's facts are CUDA's.
  '**/_ascend/**',
  '**/ascend/**',
  '**/npu/**',
];
const builtIn = picomatch(OFF_PATH_GLOBS, { dot: true });

/** True for a test, benchmark, docs or build file (`relativePath` from the project root, `/`-separated). */
export function isOffPath(relativePath: string, extraGlobs: readonly string[] = []): boolean {
  if (builtIn(relativePath)) return true;
  return extraGlobs.length > 0 && picomatch.isMatch(relativePath, [...extraGlobs], { dot: true });
}
