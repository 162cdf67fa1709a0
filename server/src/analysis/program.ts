// Program facts by reachability: which of a project's deterministic-mode switches run on the default
// path. A switch counts only when it runs whenever the program does: a literal `True`, not under a
// condition (`if args.deterministic:`, a loop, an except handler), in a file on the training path
// (not a test helper), and either at module level or in a function that is called, unconditionally,
// from module-level code or from another such function. Calls are matched by name (`setup(...)`,
// `self.setup(...)`, `utils.setup(...)`), across the project's files: an over-approximation of the
// call graph that needs no type inference. A switch that fails any of these is "conditional": the
// program has a switch, and its default path runs with the mode off (docs/real-code.md).
import type { Node, Query } from 'web-tree-sitter';
import { showsTraining } from './autograd.js';
import type { ModeSetting } from './facts.js';
import { CONDITIONAL_PARENTS, isMainGuard } from './place.js';
import type { DeterministicMode } from './types.js';

/** An unconditional call: [the innermost function it stands in ('' at module level), the callee's name]. */
export type CallEdge = readonly [caller: string, callee: string];

/**
 * One query for the calls' names and the ranges that decide where they run: functions, and the
 * parts of code that may not run when their function does (an `if` body, `elif`/`else`, loops,
 * except handlers, lambdas, conditional and boolean expressions, comprehensions). Containment is then
 * worked out on offsets in one sweep, without walking up the tree for every call.
 */
export const CALL_NAME_PATTERN = [
  '(call function: [(identifier) @name (attribute attribute: (identifier) @name)])',
  '(function_definition name: (identifier) @fn.name) @fn',
  '(if_statement condition: (_) @if.condition consequence: (block) @if.body)',
  `[${[...CONDITIONAL_PARENTS].map((type) => `(${type})`).join(' ')}] @conditional`,
].join(' ');

interface Span {
  start: number;
  end: number;
  /** A function's name; undefined for a conditional part. */
  name?: string;
}

/** The file's unconditional calls, each once (place.ts says the same of one node). */
export function callEdgesOf(root: Node, query: Query): CallEdge[] {
  const spans: Span[] = [];
  const calls: Array<{ at: number; name: string }> = [];
  let pendingFn: Node | undefined;
  let pendingCondition: Node | undefined;
  for (const { name, node } of query.captures(root)) {
    if (name === 'name') calls.push({ at: node.startIndex, name: node.text });
    else if (name === 'fn') pendingFn = node;
    else if (name === 'fn.name' && pendingFn) spans.push({ start: pendingFn.startIndex, end: pendingFn.endIndex, name: node.text });
    else if (name === 'if.condition') pendingCondition = node;
    else if (name === 'if.body' && !(pendingCondition?.parent && isMainGuard(pendingCondition.parent))) spans.push({ start: node.startIndex, end: node.endIndex });
    else if (name === 'conditional') spans.push({ start: node.startIndex, end: node.endIndex });
  }
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  calls.sort((a, b) => a.at - b.at);
  const seen = new Set<string>();
  const edges: CallEdge[] = [];
  const open: Span[] = [];
  let next = 0;
  for (const call of calls) {
    while (next < spans.length && spans[next]!.start <= call.at) {
      const span = spans[next++]!;
      while (open.length && open[open.length - 1]!.end <= span.start) open.pop();
      open.push(span);
    }
    while (open.length && open[open.length - 1]!.end <= call.at) open.pop();
    let conditional = false;
    let fn = '';
    for (let i = open.length - 1; i >= 0; i--) {
      const span = open[i]!;
      if (span.end <= call.at) continue;
      if (span.name !== undefined) {
        fn = span.name;
        break;
      }
      conditional = true;
    }
    if (conditional) continue;
    const key = `${fn}\u0000${call.name}`;
    if (seen.has(key)) continue;
    seen.add(key);
    edges.push([fn, call.name]);
  }
  return edges;
}

/** One file's contribution to the program's facts. */
export interface ProgramFile {
  /** Files off the training path (tests, benchmarks, docs, build scripts) switch nothing on. */
  offPath: boolean;
  modeSettings: readonly ModeSetting[];
  calls: readonly CallEdge[];
  /** The file shows training (autograd.ts showsTraining). */
  trains: boolean;
  /**
   * The file's top-level classes and functions a whole-model compile of the program builds: all
   * (`*`) in a file that compiles one by default (compiled-models.ts), else those such a file
   * imports from it (compiled-program.ts). Set by addCompiledModels.
   */
  compiled?: ReadonlySet<string>;
  /** The file may seed torch (showsSeeding); undefined where the file's text was not read for it. */
  seeds?: boolean;
  /**
   * An entry script that trains nothing and launches no training (runsOnItsOwn): the mode its
   * switches set is its own run's, not that of the program's training entry points.
   */
  ownRun?: boolean;
}

/** What the resolution of one file's hits needs to know of its program. */
export interface ProgramView {
  mode: DeterministicMode;
  /** A file of the program on the training path trains: backward-only hazards in the others run. */
  trains: boolean;
  /** This file's top-level names a whole-model compile on the program's training path builds (ProgramFile.compiled). */
  compiles?: ReadonlySet<string>;
  /**
   * No file of the program on the training path shows a sign of seeding (programUnseeded): every
   * file was read for it, and none calls anything named like a seed function. Undefined (not known)
   * in the language server, which does not read every file of a project.
   */
  unseeded?: boolean;
}

export function programTrains(files: readonly ProgramFile[]): boolean {
  return files.some((f) => f.trains && !f.offPath);
}


/**
 * Signs that a file may seed torch: a call of anything named like a seed function (`manual_seed`,
 * `set_seed`, `seed_everything`, `seed_all_rng`, `random.seed` too), Megatron's initialisation, or
 * a transformers-style `Trainer` constructed, imported or subclassed (it seeds in its constructor; a
 * `Trainer` in prose is not one). Over-approximate on purpose: a
 * false sign only keeps a program from being called unseeded.
 */
const SEEDING_SIGNS = /[sS][eE][eE][dD]\w*\s*\(|\bTrainer\s*[(,)]|\bimport\b[^\n]*\bTrainer\b|\.Trainer\b|\binitialize_megatron\b|\bpretrain\s*\(/;

export function showsSeeding(text: string): boolean {
  return SEEDING_SIGNS.test(text);
}

/** No file on the program's training path shows seeding (each was read for it). */
export function programUnseeded(files: readonly ProgramFile[]): boolean {
  const onPath = files.filter((f) => !f.offPath);
  return onPath.length > 0 && onPath.every((f) => f.seeds === false);
}

/** The view of a file that is its own program (a notebook, a document outside any folder). */
export function loneFileView(file: ProgramFile): ProgramView {
  return { mode: programMode([file]), trains: programTrains([file]), ...(file.compiled && !file.offPath ? { compiles: file.compiled } : {}), unseeded: programUnseeded([file]) };
}

const MAIN_GUARD = /^if\s+__name__\s*==\s*['"]__main__['"]\s*:/m;
/** A call named like a training launch (`train(args)`, `main_train()`, `trainer.fit()`, `pretrain(...)`). */
const LAUNCHES_TRAINING = /\b\w*train\w*\s*\(|\bfit\s*\(|\bfinetune\w*\s*\(/i;

/**
 * A script run on its own (a main guard) that shows no training and calls nothing named like a
 * training launch: a checkpoint converter or an export or comparison tool that turns the
 * deterministic mode on for its own run. Each entry point is its own process, so that switch
 * does not reach the program's training runs. `from_pretrained(...)` loads weights: not a launch.
 * Over-approximate on purpose: a false launch only keeps the switch program-wide, as before.
 */
export function runsOnItsOwn(text: string): boolean {
  return MAIN_GUARD.test(text) && !showsTraining(text) && !LAUNCHES_TRAINING.test(text.replace(/\w*_pretrained\b/g, ''));
}

/** The switches that run on the program's default path. */
export function reachedSwitches(files: readonly ProgramFile[]): ModeSetting[] {
  const onPath = files.filter((f) => !f.offPath);
  // An own-run script's switches set the mode of its own process only (programModeFor); its calls
  // still reach another file's switch, as a launcher's would.
  const candidates = onPath.flatMap((f) => (f.ownRun ? [] : f.modeSettings.filter((s) => !s.conditional)));
  if (candidates.length === 0) return [];
  const callers = new Map<string, string[]>();
  for (const file of onPath) {
    for (const [caller, callee] of file.calls) {
      const list = callers.get(caller);
      if (list) list.push(callee);
      else callers.set(caller, [callee]);
    }
  }
  // Functions reached from module-level code, by name.
  const reached = new Set<string>();
  const queue = [...(callers.get('') ?? [])];
  while (queue.length) {
    const name = queue.pop()!;
    if (reached.has(name)) continue;
    reached.add(name);
    queue.push(...(callers.get(name) ?? []));
  }
  return candidates.filter((s) => s.function === undefined || reached.has(s.function));
}

/** The program's mode: on if a reached switch turns it on, warn-only if only warn_only does, else off. */
export function programMode(files: readonly ProgramFile[]): DeterministicMode {
  const settings = reachedSwitches(files);
  if (settings.some((s) => s.mode === 'on')) return 'on';
  if (settings.some((s) => s.mode === 'warn')) return 'warn';
  return 'off';
}

/**
 * The mode file `index` of the program runs with: the program's, or for an own-run script (a
 * converter turning the mode on), what its own switches add to it when it is run.
 */
export function programModeFor(files: readonly ProgramFile[], index: number, programWide = programMode(files)): DeterministicMode {
  const file = files[index];
  if (!file?.ownRun || !file.modeSettings.some((s) => s.mode !== 'off' && !s.conditional)) return programWide;
  return programMode(files.map((f, i) => (i === index ? { ...f, ownRun: false } : f)));
}

/**
 * The switches that turn the mode on but that the default path does not run (behind a flag, in a
 * test helper, in a function nothing calls unconditionally), with the index of their file: the
 * language server's hover says the program has one.
 */
export function unreachedSwitches(files: readonly ProgramFile[]): Array<{ file: number; setting: ModeSetting }> {
  const reached = new Set(reachedSwitches(files));
  return files.flatMap((f, file) => f.modeSettings.filter((s) => s.mode !== 'off' && !reached.has(s)).map((setting) => ({ file, setting })));
}
