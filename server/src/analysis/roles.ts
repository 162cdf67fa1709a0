// Which files are off the training path: tests, benchmarks, docs, build scripts, exporters, evaluation and
// inference entry scripts at the project root, and backends for accelerators other than CUDA GPUs. Their findings
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
  // Exporters (ONNX, TorchScript, TensorRT, meshes from a trained field): they convert or run a trained
  // model, never train it.
  '**/export/**',
  '**/exporter/**',
  '**/exporters/**',
  // Backends for other accelerators (Ascend NPUs): bitexact's facts are CUDA's.
  '**/_ascend/**',
  '**/ascend/**',
  '**/npu/**',
];
const builtIn = picomatch(OFF_PATH_GLOBS, { dot: true });

/**
 * A file named as a test or benchmark by one of the words of its name (`numerical_tests_kimi.py`,
 * `bench_sm90.py`, `benchmark.py`, `attn-benchmark.py`), not by a substring (`latest.py`,
 * `attest.py`, `contest.py`, `workbench.py` stay on the path).
 */
const OFF_PATH_WORD = /^(test|tests|testing|bench|benchmark|benchmarks)$/;

/**
 * Evaluation and inference entry scripts at the project root (`validate.py`, `inference.py`): they
 * load a trained model and run it forward, off the training path. Only at the root, where a
 * repository keeps its command-line entry points; a module of that name inside a package may be
 * library code that training imports.
 */
const ROOT_EVALUATION_SCRIPT = /^(validate|validation|eval|evaluate|evaluation|inference|infer|predict)\.py$/;

/**
 * True for a test, benchmark, docs or build file (`relativePath` from the project root, `/`-separated).
 * `packageModule`: the file sits beside an `__init__.py`, so a `setup.py` there is a module of its
 * package that code imports (`pkg.eval.setup`: configuration and model set-up), not a build script.
 */
export function isOffPath(relativePath: string, extraGlobs: readonly string[] = [], packageModule = false): boolean {
  if (builtIn(relativePath)) return true;
  const name = relativePath.slice(relativePath.lastIndexOf('/') + 1);
  if (name === 'setup.py' && !packageModule) return true;
  if (name.endsWith('.py') && name.slice(0, -3).split(/[_.-]/).some((word) => OFF_PATH_WORD.test(word.toLowerCase()))) return true;
  if (!relativePath.includes('/') && ROOT_EVALUATION_SCRIPT.test(name)) return true;
  return extraGlobs.length > 0 && picomatch.isMatch(relativePath, [...extraGlobs], { dot: true });
}
